// bridge.d.ts is written by hand: these checks catch it drifting from bridge.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as bridgeModule from "../bridge.js";

const here = new URL(".", import.meta.url);
const dts = readFileSync(new URL("../bridge.d.ts", here), "utf8");
const source = readFileSync(new URL("../bridge.js", here), "utf8");

test("every export of bridge.js is declared, and nothing more", () => {
  const declared = new Set([...dts.matchAll(/^export declare (?:const|class|function) (\w+)/gm)].map((m) => m[1]));
  assert.deepEqual([...declared].sort(), Object.keys(bridgeModule).sort());
});

test("every option bridge.js reads is in ConnectOptions", () => {
  const read = new Set([...source.matchAll(/\boptions\.(\w+)/g)].map((m) => m[1]));
  const block = dts.slice(dts.indexOf("export interface ConnectOptions"), dts.indexOf("export declare class Bridge {"));
  const declared = new Set([...block.matchAll(/^\s+(\w+)\?:/gm)].map((m) => m[1]));
  declared.add("bridge"); // installAstroShim's own option, declared on its signature
  for (const name of read) assert.ok(declared.has(name), `option ${name} is read by bridge.js but not declared`);
  for (const name of declared) if (name !== "bridge") assert.ok(read.has(name), `option ${name} is declared but never read`);
});

test("every public method of Bridge is declared", () => {
  const methods = Object.getOwnPropertyNames(bridgeModule.Bridge.prototype)
    .filter((n) => n !== "constructor" && !n.startsWith("_"));
  const block = dts.slice(dts.indexOf("export declare class Bridge {"), dts.indexOf("export declare function connect"));
  for (const name of methods) assert.match(block, new RegExp(`^\\s+${name}[<(]`, "m"), `Bridge.${name} is not declared`);
  const declared = [...block.matchAll(/^\s+(\w+)[<(]/gm)].map((m) => m[1]).filter((n) => n !== "constructor");
  for (const name of declared) assert.ok(methods.includes(name), `Bridge.${name} is declared but does not exist`);
});
