// Tests of scripts/wasm-glue.mjs on hand-made modules: `node --test scripts/wasm-glue.test.mjs`.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  dropClasses,
  readExports,
  readImports,
  shortenExports,
  shortenImports,
} from "./wasm-glue.mjs";

const text = (s) => [s.length, ...new TextEncoder().encode(s)];
const section = (id, body) => [id, body.length, ...body];

/**
 * A module that imports functions of type () -> i32 from `module` and a memory from `env`,
 * and exports one function under every name in `exports`: it returns the sum of the first two
 * imports.
 */
function makeModule(module, imports, exports) {
  const type = section(0x01, [0x01, 0x60, 0x00, 0x01, 0x7f]);
  const entries = imports.flatMap((name) => [...text(module), ...text(name), 0x00, 0x00]);
  const memory = [...text("env"), ...text("memory"), 0x02, 0x00, 0x01];
  const importSection = section(0x02, [imports.length + 1, ...entries, ...memory]);
  const funcSection = section(0x03, [0x01, 0x00]);
  const run = imports.length;
  const exportSection = section(0x07, [
    exports.length,
    ...exports.flatMap((name) => [...text(name), 0x00, run]),
  ]);
  const code = [0x00, 0x10, 0x00, 0x10, 0x01, 0x6a, 0x0b];
  const codeSection = section(0x0a, [0x01, code.length, ...code]);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...type, ...importSection, ...funcSection, ...exportSection, ...codeSection,
  ]);
}

const FORTY = "__wbg_forty_0123456789abcdef";
const TWO = "__wbg_two_fedcba9876543210";

/** Glue in wasm-bindgen's layout: one exported class, the import object, an entry point. */
const glue = `let wasm;
export class Thing {
    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        ThingFinalization.unregister(this);
        return ptr;
    }
    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_thing_free(ptr, 0);
    }
    get() {
        return wasm.thing_get(this.__wbg_ptr) + wasm.run_both();
    }
}
if (Symbol.dispose) Thing.prototype[Symbol.dispose] = Thing.prototype.free;
function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        ${FORTY}: function() {
            return 40;
        },
        ${TWO}: function() { return 2; },
    };
    return {
        __proto__: null,
        "./app_bg.js": import0,
        "env": {
            memory: new WebAssembly.Memory({ initial: 1 }),
        },
    };
}
const ThingFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_thing_free(ptr, 1));
const unrelated = { __wbg_forty: 1, run_both_times: 2 };
export async function start(bytes) {
    const { instance } = await WebAssembly.instantiate(bytes, __wbg_get_imports());
    wasm = instance.exports;
    return wasm.run_both() + wasm.run_both();
}
`;

const defaultModule = () =>
  makeModule("./app_bg.js", [FORTY, TWO], ["run_both", "__wbg_thing_free", "thing_get", "main"]);

/** Runs the glue's `start`, as the page would. */
async function start(js, wasm) {
  const source = js.replace(/^export /gm, "");
  return new Function(`${source}; return start;`)()(wasm);
}

test("renames the imports in the module and the glue alike", async () => {
  const wasm = defaultModule();
  const out = shortenImports(wasm, glue);

  assert.equal(out.renamed, 3);
  assert.deepEqual(
    readImports(out.wasm).map(({ module, name }) => [module, name]),
    [["a", "a"], ["a", "b"], ["b", "c"]],
  );
  assert.ok(out.wasm.length < wasm.length);
  assert.match(out.js, /const unrelated = \{ __wbg_forty: 1, run_both_times: 2 \}/);
  assert.equal(await start(out.js, out.wasm), 84);
});

test("refuses glue that lacks a key for an import", () => {
  const wasm = makeModule("./app_bg.js", [FORTY, "__wbg_missing_0000000000000000"], ["run"]);
  assert.throws(
    () => shortenImports(wasm, glue),
    /0 keys for the import __wbg_missing_0000000000000000/,
  );
});

test("refuses glue that names an import twice", () => {
  const wasm = makeModule("./app_bg.js", [TWO], ["run"]);
  const twice = glue.replace("__proto__: null,\n        __wbg_forty", `__proto__: null,\n        ${TWO}: 1,\n        __wbg_forty`);
  assert.throws(() => shortenImports(wasm, twice), /2 keys for the import/);
});

test("refuses a file that is not a wasm module", () => {
  assert.throws(() => shortenImports(Uint8Array.from([1, 2, 3]), glue), /not a version 1 wasm/);
});

test("leaves a module without imports or exports as it is", () => {
  const bare = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  assert.deepEqual(shortenImports(bare, glue), { wasm: bare, js: glue, renamed: 0 });
  assert.deepEqual(shortenExports(bare, glue), { wasm: bare, js: glue, renamed: 0 });
});

test("renames only the exports the glue reaches as wasm.<name>", async () => {
  const wasm = defaultModule();
  const out = shortenExports(wasm, glue);

  // `main` is never mentioned, so it keeps its name; the others are renamed everywhere.
  assert.equal(out.renamed, 3);
  assert.deepEqual(readExports(out.wasm).map((e) => e.name), ["a", "b", "c", "main"]);
  assert.doesNotMatch(out.js, /wasm\.(run_both|__wbg_thing_free|thing_get)\b/);
  assert.match(out.js, /run_both_times: 2/);
  assert.equal(await start(out.js, out.wasm), 84);
});

test("keeps the name of an export the glue also reaches another way", () => {
  const wasm = defaultModule();
  const out = shortenExports(wasm, `${glue}\ninstance.exports.thing_get();\n`);
  assert.deepEqual(readExports(out.wasm).map((e) => e.name), ["a", "b", "thing_get", "main"]);
});

test("drops a class with its registry and the exports only it calls", async () => {
  const wasm = defaultModule();
  const out = dropClasses(wasm, glue, ["Thing"]);

  assert.deepEqual(out.exports.sort(), ["__wbg_thing_free", "thing_get"]);
  assert.deepEqual(readExports(out.wasm).map((e) => e.name), ["run_both", "main"]);
  assert.doesNotMatch(out.js, /Thing/);
  assert.match(out.js, /function __wbg_get_imports/);
  // The module still runs, and the exports the glue calls elsewhere stay.
  assert.equal(await start(out.js, out.wasm), 84);
});

test("refuses to drop a class the glue does not define or still uses", () => {
  const wasm = defaultModule();
  assert.throws(() => dropClasses(wasm, glue, ["Other"]), /0 of class Other, expected 1/);
  assert.throws(
    () => dropClasses(wasm, `${glue}\nnew Thing();\n`, ["Thing"]),
    /still uses Thing 1 times/,
  );
});

test("refuses to drop exports the module does not have", () => {
  const wasm = makeModule("./app_bg.js", [FORTY, TWO], ["run_both"]);
  assert.throws(() => dropClasses(wasm, glue, ["Thing"]), /does not export/);
});
