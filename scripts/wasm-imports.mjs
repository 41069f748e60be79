// Short names for the functions a wasm-bindgen module imports from its JavaScript glue.
//
// wasm-bindgen names every import after the Rust item plus a 16-digit hash, for example
// `__wbg_set_strokeStyle_b90c8a6e0d37c80d`, under the module name `./<crate>_bg.js`. Each name is
// written twice, once in the wasm import section and once as a key of the object the glue
// passes to `WebAssembly.instantiate`. The hashes are random digits that gzip cannot squeeze,
// so the app's ~200 imports cost several kilobytes. `shortenImports` renames them to `a`, `b`,
// … in both files at once and checks that the two still agree.

/** Reads an unsigned LEB128 number at `at`; returns the value and the offset after it. */
function readLeb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= bytes.length) throw new Error("the wasm module ends inside a number");
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

function writeLeb(value) {
  const out = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

const IMPORT_SECTION = 2;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Reads a length-prefixed name at `at`; returns the text and the offset after it. */
function readName(bytes, at) {
  const [length, start] = readLeb(bytes, at);
  const end = start + length;
  if (end > bytes.length) throw new Error("the wasm module ends inside a name");
  return [utf8.decode(bytes.subarray(start, end)), end];
}

/** Skips an import's description (function, table, memory or global); returns its end. */
function skipImportDesc(bytes, at) {
  const kind = bytes[at++];
  switch (kind) {
    case 0: // function: a type index
      return readLeb(bytes, at)[1];
    case 1: {
      // table: a reference type, then limits
      at += 1;
      const [flags, afterFlags] = readLeb(bytes, at);
      at = readLeb(bytes, afterFlags)[1];
      return flags & 1 ? readLeb(bytes, at)[1] : at;
    }
    case 2: {
      // memory: limits
      const [flags, afterFlags] = readLeb(bytes, at);
      at = readLeb(bytes, afterFlags)[1];
      return flags & 1 ? readLeb(bytes, at)[1] : at;
    }
    case 3: // global: a value type and mutability
      return at + 2;
    default:
      throw new Error(`unknown import kind ${kind}`);
  }
}

/** The sections of a wasm module: id, start and end of each body. */
function sections(bytes) {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) {
    throw new Error("not a version 1 wasm module");
  }
  const list = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, start] = readLeb(bytes, at + 1);
    const end = start + size;
    if (end > bytes.length) throw new Error("a wasm section runs past the end of the module");
    list.push({ id, headerStart: at, start, end });
    at = end;
  }
  return list;
}

/** The imports of a wasm module, in order: module, name and the raw description bytes. */
export function readImports(bytes) {
  const section = sections(bytes).find((s) => s.id === IMPORT_SECTION);
  if (!section) return [];
  let [count, at] = readLeb(bytes, section.start);
  const imports = [];
  while (count-- > 0) {
    let module;
    let name;
    [module, at] = readName(bytes, at);
    [name, at] = readName(bytes, at);
    const descEnd = skipImportDesc(bytes, at);
    imports.push({ module, name, desc: bytes.subarray(at, descEnd) });
    at = descEnd;
  }
  if (at !== section.end) throw new Error("the import section has bytes after its last import");
  return imports;
}

/** `a`, `b`, …, `Z`, `aa`, `ba`, …: short JavaScript identifiers, none of them a keyword. */
function shortName(index) {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let name = "";
  do {
    name += letters[index % letters.length];
    index = Math.floor(index / letters.length);
  } while (index > 0);
  return name;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Renames the imports of `wasm` (a Uint8Array) and the matching keys of `js`, wasm-bindgen's
 * unminified glue. Returns `{ wasm, js, renamed }`. Throws, changing nothing, when the glue
 * does not have exactly one object key for every import, so a new wasm-bindgen layout fails the
 * build instead of breaking the page.
 */
export function shortenImports(wasm, js) {
  const imports = readImports(wasm);
  if (imports.length === 0) return { wasm, js, renamed: 0 };

  // One short name per distinct module and per distinct (module, name) pair.
  const moduleNames = new Map();
  const importNames = new Map();
  for (const { module, name } of imports) {
    if (!moduleNames.has(module)) moduleNames.set(module, shortName(moduleNames.size));
    const key = `${module}\0${name}`;
    if (!importNames.has(key)) importNames.set(key, shortName(importNames.size));
  }

  // The glue: each import is a key `name: function(` (or `name: value`) of the object for its
  // module, and each module a key `"module": object` of the object `__wbg_get_imports` returns.
  let glue = js;
  const replaceOnce = (pattern, replacement, what) => {
    const matches = glue.match(new RegExp(pattern.source, `${pattern.flags}g`)) ?? [];
    if (matches.length !== 1) {
      throw new Error(`the glue has ${matches.length} keys for ${what}, expected exactly 1`);
    }
    glue = glue.replace(pattern, replacement);
  };
  for (const [key, short] of importNames) {
    const name = key.slice(key.indexOf("\0") + 1);
    replaceOnce(
      new RegExp(`(^[ \\t]+)${escapeRegExp(name)}(:)`, "m"),
      `$1${short}$2`,
      `the import ${name}`,
    );
  }
  for (const [module, short] of moduleNames) {
    replaceOnce(
      new RegExp(`(^[ \\t]+)"${escapeRegExp(module)}"(:)`, "m"),
      `$1${short}$2`,
      `the module "${module}"`,
    );
  }

  // The wasm: a new import section, every other section copied as it is.
  const body = [...writeLeb(imports.length)];
  for (const { module, name, desc } of imports) {
    for (const text of [moduleNames.get(module), importNames.get(`${module}\0${name}`)]) {
      const bytes = encoder.encode(text);
      body.push(...writeLeb(bytes.length), ...bytes);
    }
    body.push(...desc);
  }
  const parts = [wasm.subarray(0, 8)];
  for (const s of sections(wasm)) {
    if (s.id === IMPORT_SECTION) {
      parts.push(Uint8Array.from([IMPORT_SECTION, ...writeLeb(body.length), ...body]));
    } else {
      parts.push(wasm.subarray(s.headerStart, s.end));
    }
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { wasm: out, js: glue, renamed: importNames.size };
}
