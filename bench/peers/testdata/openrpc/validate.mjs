// Validates an OpenRPC document with the OpenRPC project's own tools
// (@open-rpc/schema-utils-js) and a JSON Schema validator (ajv):
//
//   node validate.mjs DOCUMENT.json [CALLS.json]
//
// 1. validateOpenRPCDocument: the document against the OpenRPC
//    meta-schema of its version, its schemas against the JSON Schema
//    meta-schema;
// 2. the rules of the specification that no schema states: unique method
//    names, unique param names, optional params after the required ones,
//    unique error codes (in x-notification too);
// 3. every $ref points at a schema of components.schemas, and ajv
//    compiles every param and result schema;
// 4. parseOpenRPCDocument dereferences the document, when its
//    components do not refer to themselves (its dereferencer does not end
//    on recursive schemas, which are valid JSON Schema: step 3 covers
//    them);
// 5. with CALLS.json, a list of {"method", "params", "valid"}: the params
//    of the calls marked valid fit the method's content descriptors (by
//    position for an array, by name for an object: each given value
//    against its schema, each required param present, no more params by
//    position than described), and those of the others do not.
//
// It prints one JSON line and exits 0 when all holds, or prints
// {"ok":false,"errors":[...]} and exits 1.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv";
import schemaUtils from "@open-rpc/schema-utils-js";

const { validateOpenRPCDocument, parseOpenRPCDocument } = schemaUtils;
const require = createRequire(import.meta.url);
const versions = {
  schemaUtils: require("@open-rpc/schema-utils-js/package.json").version,
  ajv: require("ajv/package.json").version,
};

const errors = [];
const fail = (what, detail) =>
  errors.push({ what, detail: typeof detail === "string" ? detail : typeof detail?.message === "string" ? detail.message : JSON.stringify(detail) });

// allMethods lists the methods and the x-notification of each.
const allMethods = (doc) => (doc.methods ?? []).flatMap((m) => (m["x-notification"] ? [m, m["x-notification"]] : [m]));

function specRules(doc) {
  const names = new Set();
  for (const m of allMethods(doc)) {
    if (names.has(m.name)) fail("duplicate method", m.name);
    names.add(m.name);
    const params = new Set();
    let optional = null;
    for (const p of m.params ?? []) {
      if (params.has(p.name)) fail("duplicate param", `${m.name}: ${p.name}`);
      params.add(p.name);
      if (!p.required) optional = p.name;
      else if (optional !== null) fail("required param after an optional one", `${m.name}: ${p.name} after ${optional}`);
    }
    const codes = new Set();
    for (const e of m.errors ?? []) {
      if (codes.has(e.code)) fail("duplicate error code", `${m.name}: ${e.code}`);
      codes.add(e.code);
    }
  }
}

// refs returns the $ref values in v.
function refs(v, out = []) {
  if (Array.isArray(v)) v.forEach((x) => refs(x, out));
  else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string") out.push(x);
      else refs(x, out);
    }
  }
  return out;
}

const prefix = "#/components/schemas/";

// recursive reports whether a component refers to itself, through others.
function recursive(schemas) {
  const state = {};
  const visit = (name) => {
    if (state[name] === "done") return false;
    if (state[name] === "on path") return true;
    state[name] = "on path";
    const cyclic = refs(schemas[name]).some((r) => r.startsWith(prefix) && visit(r.slice(prefix.length)));
    state[name] = "done";
    return cyclic;
  };
  return Object.keys(schemas).some(visit);
}

// compileSchemas checks the references and compiles every content
// descriptor's schema with ajv, the document itself as the base of its
// references. It returns the validator of each method's params.
function compileSchemas(doc, text) {
  const schemas = doc.components?.schemas ?? {};
  for (const r of refs(doc)) {
    if (!r.startsWith(prefix) || !(r.slice(prefix.length) in schemas)) fail("unresolved $ref", r);
  }
  const ajv = new Ajv({ allErrors: true });
  // The whole document is the base of "#/components/schemas/…": ajv
  // ignores the members that are no schema keywords.
  ajv.addSchema(JSON.parse(text), "doc");
  const validators = new Map();
  (doc.methods ?? []).forEach((m, i) => {
    const compile = (path) => {
      try {
        return ajv.compile({ $ref: `doc#/methods/${i}/${path}` });
      } catch (e) {
        fail("schema does not compile", `${m.name} ${path}: ${e.message}`);
        return () => true;
      }
    };
    if (m.result) compile("result/schema");
    validators.set(m.name, {
      method: m,
      params: (m.params ?? []).map((p, j) => ({ ...p, check: compile(`params/${j}/schema`) })),
    });
  });
  return validators;
}

// checkCall returns why params do not fit the method, "" when they do.
function checkCall(entry, params) {
  if (!entry) return "no such method";
  const { method, params: described } = entry;
  const byName = params !== null && typeof params === "object" && !Array.isArray(params);
  if (params === undefined) params = [];
  if (byName && method.paramStructure === "by-position") return "by name to a by-position method";
  if (!byName && method.paramStructure === "by-name") return "by position to a by-name method";
  if (!byName && params.length > described.length) return `${params.length} params, ${described.length} described`;
  for (const [i, p] of described.entries()) {
    const v = byName ? params[p.name] : params[i];
    if (v === undefined) {
      if (p.required) return `missing ${p.name}`;
      continue;
    }
    if (!p.check(v)) return `${p.name}: ${JSON.stringify(p.check.errors)}`;
  }
  return "";
}

async function main() {
  const [docPath, callsPath] = process.argv.slice(2);
  if (!docPath) throw new Error("usage: node validate.mjs DOCUMENT.json [CALLS.json]");
  const text = readFileSync(docPath, "utf8");
  const doc = JSON.parse(text);
  const valid = validateOpenRPCDocument(JSON.parse(text));
  if (valid !== true) fail("meta-schema", valid);
  specRules(doc);
  let dereferenced = false;
  let validators = new Map();
  if (errors.length === 0) {
    validators = compileSchemas(doc, text);
  }
  if (errors.length === 0 && !recursive(doc.components?.schemas ?? {})) {
    try {
      await parseOpenRPCDocument(JSON.parse(text), { dereference: true, validate: true });
      dereferenced = true;
    } catch (e) {
      fail("parseOpenRPCDocument", e);
    }
  }
  let calls = 0;
  if (errors.length === 0 && callsPath) {
    for (const c of JSON.parse(readFileSync(callsPath, "utf8"))) {
      const why = checkCall(validators.get(c.method), c.params);
      if ((why === "") !== c.valid) {
        fail(c.valid ? "valid call refused" : "invalid call accepted", `${c.method} ${JSON.stringify(c.params)}: ${why || "fits"}`);
      }
      calls++;
    }
  }
  const summary = { ok: errors.length === 0, node: process.version, ...versions, methods: doc.methods?.length ?? 0, dereferenced, calls };
  if (errors.length > 0) summary.errors = errors;
  console.log(JSON.stringify(summary));
  process.exit(errors.length === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(JSON.stringify({ ok: false, errors: [{ what: "crash", detail: String(e?.stack ?? e) }] }));
  process.exit(1);
});
