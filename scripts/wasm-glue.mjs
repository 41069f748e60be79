// Edits a wasm-bindgen module and its JavaScript glue together, for the release build's
// post_build hook (scripts/minify-dist.mjs):
//
// - `dropClasses` removes exported classes that the page never uses, with the wasm exports
//   that only they call, so that wasm-opt can delete the Rust code behind them.
// - `shortenImports` and `shortenExports` rename the functions the module imports from the glue
//   and the ones the glue calls in the module to `a`, `b`, …. wasm-bindgen names an import
//   after its Rust item plus a 16-digit hash, for example
//   `__wbg_set_strokeStyle_b90c8a6e0d37c80d`, and each name is written in both files. gzip
//   cannot squeeze the hashes, so the app's ~200 imports cost several kilobytes.
//
// Each function checks that the glue has exactly the shape it expects and throws otherwise, so a
// new wasm-bindgen layout fails the build instead of breaking the page.

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
const EXPORT_SECTION = 7;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Reads a length-prefixed name at `at`; returns the text and the offset after it. */
function readName(bytes, at) {
  const [length, start] = readLeb(bytes, at);
  const end = start + length;
  if (end > bytes.length) throw new Error("the wasm module ends inside a name");
  return [utf8.decode(bytes.subarray(start, end)), end];
}

function writeName(text) {
  const bytes = encoder.encode(text);
  return [...writeLeb(bytes.length), ...bytes];
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

/** The sections of a wasm module: id, where its header starts, and its body. */
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

/** `wasm` with the body of section `id` replaced by `body` (an array of bytes). */
function replaceSection(wasm, id, body) {
  const parts = [wasm.subarray(0, 8)];
  for (const s of sections(wasm)) {
    if (s.id === id) {
      parts.push(Uint8Array.from([id, ...writeLeb(body.length), ...body]));
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
  return out;
}

/**
 * The entries of section `id`, read one by one with `readEntry(at)`, which returns the entry and
 * the offset after it; `what` names the section in errors.
 */
function readEntries(bytes, id, what, readEntry) {
  const section = sections(bytes).find((s) => s.id === id);
  if (!section) return [];
  let [left, at] = readLeb(bytes, section.start);
  const entries = [];
  while (left-- > 0) {
    let entry;
    [entry, at] = readEntry(at);
    entries.push(entry);
  }
  if (at !== section.end) throw new Error(`the ${what} section has bytes after its last entry`);
  return entries;
}

/** The imports of a wasm module, in order: module, name and the raw description bytes. */
export function readImports(bytes) {
  return readEntries(bytes, IMPORT_SECTION, "import", (at) => {
    const [module, afterModule] = readName(bytes, at);
    const [name, afterName] = readName(bytes, afterModule);
    const end = skipImportDesc(bytes, afterName);
    return [{ module, name, desc: bytes.subarray(afterName, end) }, end];
  });
}

/** The exports of a wasm module, in order: name, kind and index. */
export function readExports(bytes) {
  return readEntries(bytes, EXPORT_SECTION, "export", (at) => {
    const [name, afterName] = readName(bytes, at);
    const kind = bytes[afterName];
    const [index, end] = readLeb(bytes, afterName + 1);
    return [{ name, kind, index }, end];
  });
}

function writeExports(wasm, exports) {
  const body = [...writeLeb(exports.length)];
  for (const { name, kind, index } of exports) {
    body.push(...writeName(name), kind, ...writeLeb(index));
  }
  return replaceSection(wasm, EXPORT_SECTION, body);
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

/** `text` with the characters a regular expression gives meaning to escaped. */
export const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** How often `pattern` occurs in `text`. */
const count = (text, pattern) =>
  (text.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)) ?? []).length;

/** A whole identifier: not part of a longer one. */
const word = (name) => `(?<![\\w$])${escapeRegExp(name)}(?![\\w$])`;

/**
 * Renames the imports of `wasm` (a Uint8Array) and the matching keys of `js`, wasm-bindgen's
 * unminified glue. Returns `{ wasm, js, renamed }`. Throws, changing nothing, when the glue
 * does not have exactly one object key for every import.
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
    const found = count(glue, pattern);
    if (found !== 1) {
      throw new Error(`the glue has ${found} keys for ${what}, expected exactly 1`);
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

  const body = [...writeLeb(imports.length)];
  for (const { module, name, desc } of imports) {
    body.push(...writeName(moduleNames.get(module)));
    body.push(...writeName(importNames.get(`${module}\0${name}`)));
    body.push(...desc);
  }
  return { wasm: replaceSection(wasm, IMPORT_SECTION, body), js: glue, renamed: importNames.size };
}

/**
 * Renames the exports that the glue reaches only as `wasm.<name>`, there and in `wasm`; other
 * exports keep their names. Returns `{ wasm, js, renamed }`.
 */
export function shortenExports(wasm, js) {
  const exports = readExports(wasm);
  const taken = new Set(exports.map((e) => e.name));
  let glue = js;
  let next = 0;
  let renamed = 0;
  const out = exports.map((entry) => {
    const uses = count(glue, new RegExp(word(entry.name)));
    const calls = new RegExp(word(`wasm.${entry.name}`), "g");
    if (uses === 0 || count(glue, calls) !== uses) return entry;
    let short;
    do short = shortName(next++);
    while (taken.has(short));
    taken.add(short);
    glue = glue.replace(calls, `wasm.${short}`);
    renamed += 1;
    return { ...entry, name: short };
  });
  return { wasm: renamed > 0 ? writeExports(wasm, out) : wasm, js: glue, renamed };
}

/**
 * Removes the exported classes `names` from the glue, with their finalization registries, and
 * the exports of `wasm` that nothing else in the glue calls. Returns `{ wasm, js, exports }`,
 * `exports` being the names of the removed exports. Throws when a class is missing or still
 * used after its removal.
 */
export function dropClasses(wasm, js, names) {
  let glue = js;
  let removed = "";
  const cut = (pattern, what, required) => {
    const found = count(glue, pattern);
    if (found > 1 || (required && found === 0)) {
      throw new Error(`the glue has ${found} of ${what}, expected ${required ? "" : "at most "}1`);
    }
    glue = glue.replace(pattern, (text) => {
      removed += text;
      return "";
    });
  };
  for (const name of names) {
    const n = escapeRegExp(name);
    cut(new RegExp(`^export class ${n} \\{\\n[\\s\\S]*?^\\}\\n`, "m"), `class ${name}`, true);
    cut(
      new RegExp(`^if \\(Symbol\\.dispose\\) ${n}\\.prototype\\[Symbol\\.dispose\\] = .*\\n`, "m"),
      `the dispose line of ${name}`,
      false,
    );
    cut(new RegExp(`^const ${n}Finalization = [\\s\\S]*?;\\n`, "m"), `${name}Finalization`, false);
    const left = count(glue, new RegExp(word(name)));
    if (left > 0) throw new Error(`the glue still uses ${name} ${left} times after removing it`);
  }

  const called = new Set([...removed.matchAll(/(?<![\w$])wasm\.([\w$]+)/g)].map((m) => m[1]));
  const unused = [...called].filter((name) => count(glue, new RegExp(word(name))) === 0);
  const exports = readExports(wasm);
  const missing = unused.filter((name) => !exports.some((e) => e.name === name));
  if (missing.length > 0) {
    throw new Error(`the module does not export ${missing.join(", ")}`);
  }
  const kept = exports.filter((e) => !unused.includes(e.name));
  return { wasm: writeExports(wasm, kept), js: glue, exports: unused };
}
