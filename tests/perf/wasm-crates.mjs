// Where the bytes of a wasm module go, crate by crate, for scripts/bench.sh.
//
//   twiggy top --format json MODULE.wasm >items.json
//   node tests/perf/wasm-crates.mjs items.json [--top N] [--module NAME]
//
// Adds up the shallow size of every item twiggy lists (each function body, data segment and
// table) by the crate its demangled name starts with, and prints the N largest crates (12 by
// default) and the rest as "other". The module must still have its function names, which the
// wasm-opt run of the release build leaves out of the module trunk ships. Names and custom
// sections are not shipped, so they are left out of the total and reported on a line of their
// own.

import { readFileSync } from "node:fs";

/** Crates that are counted together: the part of the stack each belongs to. */
const FAMILIES = [
  [/^(std|core|alloc|compiler_builtins|panic_abort|dlmalloc)$/, "std/core/alloc"],
  [/^(leptos|leptos_.*|server_fn)$/, "leptos*"],
  [/^plotters(_.*)?$/, "plotters*"],
  [/^serde(_.*)?$/, "serde*"],
  [/^(wasm_bindgen(_.*)?|js_sys|web_sys)$/, "wasm-bindgen/js-sys/web-sys"],
];

/** Names without a crate path, by what emits them. */
const UNPATHED = [
  // wasm-bindgen's imports, exports, adapters and table helpers: every import and export of
  // the module goes through its JavaScript glue.
  [/^(import |export |__wbg_|__wbindgen|__externref|closure\d+ )/, "wasm-bindgen/js-sys/web-sys"],
  // Methods of primitive types, as in `<str>::trim`, and the C-like symbols of the standard
  // library and its compiler builtins, as in `memcpy` and `__multi3`.
  [/^<(str|char|bool|[iuf](8|16|32|64|128|size)|\[.*\])>::/, "std/core/alloc"],
  [/^(mem(cpy|set|move|cmp)|bcmp|__rust_|__rdl_|__rg_|rust_begin_unwind|__[a-z]+\d+$)/, "std/core/alloc"],
  [/^data segment |^data\[/, "data segments"],
];

/** Sections that exist only to describe the module: absent from the shipped one. */
const NOT_SHIPPED = /^custom section |subsection$/;

function parseArgs(argv) {
  const options = { file: null, top: 12, module: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--top" || arg === "--module") {
      const value = argv[++i];
      if (value === undefined) throw new Error(`missing value for ${arg}`);
      if (arg === "--module") options.module = value;
      else options.top = Number(value);
    } else if (options.file === null) {
      options.file = arg;
    } else {
      throw new Error(`unexpected argument ${arg}`);
    }
  }
  if (options.file === null) throw new Error("the twiggy JSON file is required");
  if (!Number.isInteger(options.top) || options.top < 1) {
    throw new Error("--top must be a positive whole number");
  }
  return options;
}

/** The crate (or family of crates) that an item's demangled name belongs to. */
function crateOf(name) {
  for (const [pattern, group] of UNPATHED) if (pattern.test(name)) return group;
  // The first path in the name: `core::ptr::drop_in_place<T>` is core's, `<T as
  // leptos::IntoView>::into_view` is leptos's (T is a type parameter, not a path), and
  // `<attention_lens::Foo as core::fmt::Debug>::fmt` is the app's. Legacy mangling can add a
  // disambiguator, as in `std[a543996e6e7dbf1e]::thread`.
  const path = /([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?::/.exec(name);
  if (!path) return "no crate in the name";
  const crate = path[1];
  for (const [pattern, family] of FAMILIES) if (pattern.test(crate)) return family;
  return crate;
}

/** Bytes per crate, largest first, and the bytes of the sections the browser never gets. */
function byCrate(items) {
  const sizes = new Map();
  let notShipped = 0;
  for (const { name, shallow_size: bytes } of items) {
    if (NOT_SHIPPED.test(name)) {
      notShipped += bytes;
      continue;
    }
    const crate = crateOf(name);
    sizes.set(crate, (sizes.get(crate) ?? 0) + bytes);
  }
  const crates = [...sizes].map(([crate, bytes]) => ({ crate, bytes }));
  crates.sort((a, b) => b.bytes - a.bytes || a.crate.localeCompare(b.crate));
  return { crates, notShipped };
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const items = JSON.parse(readFileSync(options.file, "utf8"));
  const { crates, notShipped } = byCrate(items);
  const total = crates.reduce((sum, c) => sum + c.bytes, 0);
  const shown = crates.slice(0, options.top);
  const rest = crates.slice(options.top);
  const rows = shown.map((c) => [c.crate, c.bytes]);
  if (rest.length > 0) {
    rows.push([`other (${rest.length} crates)`, rest.reduce((sum, c) => sum + c.bytes, 0)]);
  }
  rows.push(["total", total]);

  const module = options.module ?? options.file;
  console.log(`Raw (not gzipped) bytes of each function and data segment in ${module},`);
  console.log("added up by the crate its name starts with: a generic function counts for the");
  console.log("crate that defines it, whatever types it was compiled for.");
  console.log(`The ${options.top} largest, then the rest.`);
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`${"crate".padEnd(width)}  ${"kB".padStart(7)}  ${"%".padStart(5)}`);
  console.log(`${"-".repeat(width)}  ${"-".repeat(7)}  ${"-".repeat(5)}`);
  for (const [label, bytes] of rows) {
    const kb = (bytes / 1000).toFixed(1).padStart(7);
    const percent = ((100 * bytes) / total).toFixed(1).padStart(5);
    console.log(`${label.padEnd(width)}  ${kb}  ${percent}`);
  }
  console.log(`left out: ${(notShipped / 1000).toFixed(1)} kB of names and custom sections`);
}

try {
  main();
} catch (error) {
  console.error(`wasm-crates: ${error.message}`);
  process.exit(1);
}
