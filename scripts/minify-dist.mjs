// Trunk post_build hook (see Trunk.toml): minifies the JavaScript and CSS of a release build in
// trunk's staging folder and rewrites their integrity hashes in index.html to match. Debug
// builds are left as they are, readable.
//
// Trunk's own --minify handles the CSS but cannot parse wasm-bindgen's JavaScript module, so
// both go through the npm packages terser and csso, which scripts/setup.sh installs into
// .tools/minify.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

if (process.env.TRUNK_PROFILE !== "release") process.exit(0);

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error("minify-dist: TRUNK_STAGING_DIR is not set; run this as a trunk hook");
  process.exit(1);
}
const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(repo, ".tools/minify/node_modules/"));
let terser;
let csso;
try {
  terser = require("terser");
  csso = require("csso");
} catch {
  console.error("minify-dist: terser and csso are missing from .tools/minify: run scripts/setup.sh");
  process.exit(1);
}

const htmlPath = join(staging, "index.html");
let html = readFileSync(htmlPath, "utf8");
const before = { js: 0, css: 0 };
const after = { js: 0, css: 0 };

for (const name of readdirSync(staging)) {
  const kind = name.endsWith(".js") ? "js" : name.endsWith(".css") ? "css" : null;
  if (!kind) continue;
  const path = join(staging, name);
  const source = readFileSync(path, "utf8");
  const minified =
    kind === "js"
      ? (await terser.minify(source, { module: true, compress: true, mangle: true })).code
      : csso.minify(source, { restructure: false }).css;
  writeFileSync(path, minified);
  before[kind] += source.length;
  after[kind] += minified.length;

  // The file keeps its name; only the integrity attributes that point at it change.
  const integrity = "sha384-" + createHash("sha384").update(minified).digest("base64");
  const quoted = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const tag = new RegExp(`(<[^>]*href="[^"]*${quoted}"[^>]*integrity=")[^"]*(")`, "g");
  html = html.replace(tag, `$1${integrity}$2`);
}
writeFileSync(htmlPath, html);
console.log(
  `minify-dist: js ${before.js} -> ${after.js} bytes, css ${before.css} -> ${after.css} bytes`,
);
