// Tests of scripts/wasm-imports.mjs on a hand-made module: `node --test scripts/`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readImports, shortenImports } from "./wasm-imports.mjs";

const text = (s) => [s.length, ...new TextEncoder().encode(s)];

/** A module importing functions of type () -> i32 and a memory; `run` adds the first two. */
function moduleWithImports(module, names) {
  const type = [0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f];
  const entries = names.flatMap((name) => [...text(module), ...text(name), 0x00, 0x00]);
  const memoryImport = [...text("env"), ...text("memory"), 0x02, 0x00, 0x01];
  const imports = [names.length + 1, ...entries, ...memoryImport];
  const importSection = [0x02, imports.length, ...imports];
  const funcSection = [0x03, 0x02, 0x01, 0x00];
  const exportSection = [0x07, 0x07, 0x01, ...text("run"), 0x00, names.length];
  // run() = first import () + second import ()
  const code = [0x00, 0x10, 0x00, 0x10, 0x01, 0x6a, 0x0b];
  const codeSection = [0x0a, code.length + 2, 0x01, code.length, ...code];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...type, ...importSection, ...funcSection, ...exportSection, ...codeSection,
  ]);
}

const glue = `function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_forty_0123456789abcdef: function() {
            return 40;
        },
        __wbg_two_fedcba9876543210: function() { return 2; },
    };
    return {
        __proto__: null,
        "./app_bg.js": import0,
        "env": {
            memory: new WebAssembly.Memory({ initial: 1 }),
        },
    };
}
const unrelated = { __wbg_forty: 1 };
`;

/** Evaluates the glue's import object, as the page would build it. */
const importsOf = (js) => new Function(`${js}; return __wbg_get_imports();`)();

test("renames the imports in the module and the glue alike", async () => {
  const wasm = moduleWithImports("./app_bg.js", [
    "__wbg_forty_0123456789abcdef",
    "__wbg_two_fedcba9876543210",
  ]);
  const out = shortenImports(wasm, glue);

  assert.equal(out.renamed, 3);
  assert.deepEqual(
    readImports(out.wasm).map(({ module, name }) => [module, name]),
    [["a", "a"], ["a", "b"], ["b", "c"]],
  );
  assert.ok(out.wasm.length < wasm.length);
  assert.match(out.js, /const unrelated = \{ __wbg_forty: 1 \}/);

  // The renamed module still links against the renamed glue and computes the same.
  const { instance } = await WebAssembly.instantiate(out.wasm, importsOf(out.js));
  assert.equal(instance.exports.run(), 42);
});

test("refuses glue that lacks a key for an import, changing nothing", () => {
  const wasm = moduleWithImports("./app_bg.js", [
    "__wbg_forty_0123456789abcdef",
    "__wbg_missing_0000000000000000",
  ]);
  assert.throws(
    () => shortenImports(wasm, glue),
    /0 keys for the import __wbg_missing_0000000000000000/,
  );
});

test("refuses glue that names an import twice", () => {
  const wasm = moduleWithImports("./app_bg.js", ["__wbg_two_fedcba9876543210"]);
  const twice = glue.replace("__proto__: null,\n        __wbg_forty", "__proto__: null,\n        __wbg_two_fedcba9876543210: 1,\n        __wbg_forty");
  assert.throws(() => shortenImports(wasm, twice), /2 keys for the import/);
});

test("refuses a file that is not a wasm module", () => {
  assert.throws(() => shortenImports(Uint8Array.from([1, 2, 3]), glue), /not a version 1 wasm/);
});

test("leaves a module without imports as it is", () => {
  const bare = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const out = shortenImports(bare, glue);
  assert.equal(out.renamed, 0);
  assert.equal(out.js, glue);
});
