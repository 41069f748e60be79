// Trunk post_build hook (see Trunk.toml): makes a release build in trunk's staging folder
// smaller and rewrites the integrity hashes in index.html to match. Debug builds are left as they
// are, readable.
//
// - The wasm module: removes classes that a dependency exports and the page never uses
//   (`UNUSED_CLASSES`), then runs wasm-opt (`WASM_OPT_ARGS`; index.html turns trunk's own run
//   off, so that wasm-opt sees the module without those classes), then shortens the names the
//   module and its glue share. scripts/wasm-glue.mjs does the editing.
// - JavaScript and CSS: the npm packages terser and csso. Trunk's own --minify handles the CSS
//   but cannot parse wasm-bindgen's JavaScript module.
//
// scripts/setup.sh installs wasm-opt into .tools/binaryen and terser and csso into
// .tools/minify.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { dropClasses, escapeRegExp, shortenExports, shortenImports } from "./wasm-glue.mjs";

// Leptos's client-side build links server_fn's browser client, and with it the crate
// wasm-streams, which exports these three classes for streaming server responses. The app has
// no server functions, so nothing ever creates them.
const UNUSED_CLASSES = ["IntoUnderlyingByteSource", "IntoUnderlyingSink", "IntoUnderlyingSource"];

const WASM_OPT_ARGS = [
  "-Oz",
  // The features every browser the app supports has, as wasm-bindgen's output uses them.
  "--enable-bulk-memory",
  "--enable-bulk-memory-opt",
  "--enable-nontrapping-float-to-int",
  "--enable-sign-ext",
  "--enable-mutable-globals",
  "--enable-reference-types",
  "--enable-multivalue",
  // Lets wasm-opt fold constant offsets into loads and stores. Rust puts the stack first in
  // memory, so the lowest kilobyte is only reached by a stack about to overflow.
  "--low-memory-unused",
  // A function called from one place is inlined only when it is small: that gzips better here.
  "--one-caller-inline-max-function-size=32",
  // Runs the passes again until the module stops shrinking.
  "--converge",
  // Names and custom sections that only describe how the module was built.
  "--strip-debug",
  "--strip-producers",
  "--strip-target-features",
];

if (process.env.TRUNK_PROFILE !== "release") process.exit(0);

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error("minify-dist: TRUNK_STAGING_DIR is not set; run this as a trunk hook");
  process.exit(1);
}
const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const wasmOpt = join(repo, ".tools/binaryen/node_modules/.bin/wasm-opt");
if (!existsSync(wasmOpt)) {
  console.error("minify-dist: wasm-opt is missing from .tools/binaryen: run scripts/setup.sh");
  process.exit(1);
}
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
  const tag = new RegExp(`(<[^>]*href="[^"]*${escapeRegExp(name)}"[^>]*integrity=")[^"]*(")`, "g");
  html = html.replace(tag, `$1${integrity}$2`);
}

// wasm-bindgen writes `<stem>_bg.wasm` beside its glue `<stem>.js`.
for (const wasmName of files.filter((f) => f.endsWith("_bg.wasm"))) {
  const jsName = wasmName.replace(/_bg\.wasm$/, ".js");
  if (!files.includes(jsName)) continue;
  const wasmPath = join(staging, wasmName);
  const jsPath = join(staging, jsName);
  const original = new Uint8Array(readFileSync(wasmPath));
  let wasm;
  let js;
  try {
    ({ wasm, js } = dropClasses(original, readFileSync(jsPath, "utf8"), UNUSED_CLASSES));
    writeFileSync(wasmPath, wasm);
    execFileSync(wasmOpt, [...WASM_OPT_ARGS, wasmPath, "-o", wasmPath], { stdio: "inherit" });
    wasm = new Uint8Array(readFileSync(wasmPath));
    ({ wasm, js } = shortenImports(wasm, js));
    ({ wasm, js } = shortenExports(wasm, js));
    // Refuse a module the engine would refuse.
    await WebAssembly.compile(wasm);
  } catch (error) {
    console.error(`minify-dist: cannot finish ${wasmName}: ${error.message}`);
    process.exit(1);
  }
  writeFileSync(wasmPath, wasm);
  writeFileSync(jsPath, js);
  before.wasm += original.length;
  after.wasm += wasm.length;
  updateIntegrity(wasmName, wasm);
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
