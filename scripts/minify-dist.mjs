// Trunk post_build hook (see Trunk.toml): shortens the wasm module's import names
// (scripts/wasm-imports.mjs), minifies the JavaScript and CSS of a release build in trunk's
// staging folder and rewrites the integrity hashes in index.html to match. Debug builds are left
// as they are, readable.
//
// Trunk's own --minify handles the CSS but cannot parse wasm-bindgen's JavaScript module, so
// both go through the npm packages terser and csso, which scripts/setup.sh installs into
// .tools/minify.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shortenImports } from "./wasm-imports.mjs";

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
const before = { js: 0, css: 0, wasm: 0 };
const after = { js: 0, css: 0, wasm: 0 };
const files = readdirSync(staging);

/** Points the integrity attributes of the tags that load `name` at its new content. */
function updateIntegrity(name, content) {
  const integrity = "sha384-" + createHash("sha384").update(content).digest("base64");
  const quoted = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const tag = new RegExp(`(<[^>]*href="[^"]*${quoted}"[^>]*integrity=")[^"]*(")`, "g");
  html = html.replace(tag, `$1${integrity}$2`);
}

// wasm-bindgen writes `<stem>_bg.wasm` beside its glue `<stem>.js`.
for (const wasmName of files.filter((f) => f.endsWith("_bg.wasm"))) {
  const jsName = wasmName.replace(/_bg\.wasm$/, ".js");
  if (!files.includes(jsName)) continue;
  const wasmPath = join(staging, wasmName);
  const jsPath = join(staging, jsName);
  const wasm = readFileSync(wasmPath);
  let shortened;
  try {
    shortened = shortenImports(new Uint8Array(wasm), readFileSync(jsPath, "utf8"));
    // Refuse a module the engine would refuse.
    await WebAssembly.compile(shortened.wasm);
  } catch (error) {
    console.error(`minify-dist: cannot shorten the imports of ${wasmName}: ${error.message}`);
    process.exit(1);
  }
  writeFileSync(wasmPath, shortened.wasm);
  writeFileSync(jsPath, shortened.js);
  before.wasm += wasm.length;
  after.wasm += shortened.wasm.length;
  updateIntegrity(wasmName, shortened.wasm);
}

for (const name of files) {
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
  updateIntegrity(name, minified);
}
writeFileSync(htmlPath, html);
console.log(
  `minify-dist: wasm ${before.wasm} -> ${after.wasm}, js ${before.js} -> ${after.js}, ` +
    `css ${before.css} -> ${after.css} bytes`,
);
