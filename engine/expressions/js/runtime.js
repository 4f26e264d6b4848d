// The expression runtime: n8n's globals ($json, $input, $('Node'), $now, ...) over data the host
// hands in, compiled templates, and the encoding of results for the host.
//
// The engine cannot call the host while an evaluation runs (that is what keeps the time limit
// sound), so data is asked for, not fetched: a read of something the host has not handed in yet
// records a request and aborts the run; the host answers every request (`provide`) and runs the
// template again. Answers are kept for the scope (one node run), so later items need no new run.
(function (g) {
  const luxon = g.luxon;
  const jmespath = g.jmespath;
  const intlHost = g.__intlHost;
  for (const name of ["__intlHost", "luxon", "jmespath"]) delete g[name];

  class ExpressionError extends Error {
    constructor(message, description) {
      super(message);
      this.name = "ExpressionError";
      this.description = description || "";
    }
  }

  const missingLuxon = () => {
    throw new ExpressionError("DateTime is not available: the Luxon library is not installed",
      "Run `make venv` (it installs Luxon from the npm registry) or set MINI_N8N_JS_MODULES");
  };
  const DateTime = luxon ? luxon.DateTime : undefined;
  if (luxon) {
    // Luxon reads a zone's offset by formatting the instant in it; the zone table answers directly
    luxon.IANAZone.prototype.offset = function offset(ts) {
      return this.valid && isFinite(ts) ? intlHost.offsetAt(this.name, +ts) : NaN;
    };
  }

  // ----- state of the current evaluation --------------------------------------------------
  const state = { meta: {}, zone: "UTC", itemText: "null", itemIndex: 0, item: undefined,
    answers: new Map(), needs: [], zones: new Map(), now: undefined };

  class NeedData extends Error {}

  // The host's answer for `key`: "j<json>", "u" or "e<json error>"; asks for it when missing.
  function request(key, op, args) {
    const reply = state.answers.get(key);
    if (reply === undefined) {
      state.needs.push({ key, op, args });
      throw new NeedData(key);
    }
    return reply;
  }

  function decode(reply) {
    const tag = reply[0];
    if (tag === "u") return undefined;
    const body = JSON.parse(reply.slice(1));
    if (tag === "e") throw new ExpressionError(body.message, body.description);
    return body;
  }

  function data(op, args) {
    return decode(request(op + "\u0000" + JSON.stringify(args), op, args));
  }

  function hostUtil(op, text, arg) {
    return decode(request("util\u0000" + op + "\u0000" + arg + "\u0000" + text, "util", [op, text, arg]));
  }

  intlHost.defaultZone = () => state.zone;
  // zone tables do not change: they are kept for the life of the context, not per scope
  intlHost.zoneTable = (zone) => {
    if (!state.zones.has(zone)) {
      state.needs.push({ key: "tz\u0000" + zone, op: "tz", args: [zone] });
      throw new NeedData(zone);
    }
    return state.zones.get(zone);
  };

  function currentItem() {
    if (state.item === undefined) state.item = JSON.parse(state.itemText);
    return state.item;
  }

  function nodeRef(name) {
    if (typeof name !== "string") throw new ExpressionError("$() needs a node name: $('Node name')");
    data("node", [name, "check"]);
    const ref = {
      all: (branchIndex, runIndex) => data("node", [name, "all", branchIndex, runIndex]),
      first: (branchIndex, runIndex) => data("node", [name, "first", branchIndex, runIndex]),
      last: (branchIndex, runIndex) => data("node", [name, "last", branchIndex, runIndex]),
      itemMatching: (itemIndex) => data("node", [name, "item", itemIndex]),
      pairedItem: (itemIndex) => data("node", [name, "item", itemIndex === undefined ? state.itemIndex : itemIndex]),
    };
    Object.defineProperty(ref, "item", { enumerable: true, get: () => data("node", [name, "item", state.itemIndex]) });
    Object.defineProperty(ref, "isExecuted", { enumerable: true, get: () => data("node", [name, "isExecuted"]) });
    Object.defineProperty(ref, "params", { enumerable: true, get: () => data("node", [name, "params"]) });
    Object.defineProperty(ref, "runIndex", { enumerable: true, get: () => data("node", [name, "runIndex"]) });
    return ref;
  }

  function legacyNode(name) {
    const out = {};
    const at = () => data("node", [name, "at", state.itemIndex]) || {};
    Object.defineProperty(out, "json", { enumerable: true, get: () => at().json });
    Object.defineProperty(out, "binary", { enumerable: true, get: () => at().binary });
    Object.defineProperty(out, "parameter", { enumerable: true, get: () => data("node", [name, "params"]) });
    Object.defineProperty(out, "runIndex", { enumerable: true, get: () => data("node", [name, "runIndex"]) });
    return out;
  }

  const $node = new Proxy({}, {
    get: (_t, name) => (typeof name === "string" ? (data("node", [name, "check"]), legacyNode(name)) : undefined),
  });

  function $items(name, outputIndex, runIndex) {
    if (name === undefined) return data("input", ["all"]);
    return data("node", [name, "all", outputIndex, runIndex]);
  }

  const $input = {};
  Object.defineProperty($input, "item", { enumerable: true, get: currentItem });
  // n8n: the parameters of the node the input came from
  Object.defineProperty($input, "params", { enumerable: true,
    get: () => (state.meta.prevNode.name ? data("node", [state.meta.prevNode.name, "params"]) : {}) });
  Object.defineProperty($input, "context", { enumerable: true, get: () => ({ noItemsLeft: false }) });
  $input.all = () => data("input", ["all"]);
  $input.first = () => data("input", ["all"])[0];
  $input.last = () => { const all = data("input", ["all"]); return all[all.length - 1]; };

  function isEmptyValue(value) {
    if (value === undefined || value === null || value === "") return true;
    if (Array.isArray(value)) return value.length === 0;
    if (typeof value === "object" && !(value instanceof Date) && !(DateTime && DateTime.isDateTime(value))) {
      return Object.keys(value).length === 0;
    }
    return false;
  }

  function fromAI(...args) {
    return data("fromAI", args);
  }

  const denied = {};
  const scope = Object.create(null);
  const getters = {
    $json: () => { const item = currentItem(); return item ? item.json : undefined; },
    $binary: () => { const item = currentItem(); return item ? item.binary || {} : undefined; },
    $input: () => $input,
    $itemIndex: () => state.itemIndex,
    $runIndex: () => state.meta.runIndex,
    $prevNode: () => state.meta.prevNode,
    $execution: () => state.meta.execution,
    $workflow: () => state.meta.workflow,
    $vars: () => state.meta.vars,
    $parameter: () => state.meta.parameters,
    $nodeVersion: () => state.meta.nodeVersion,
    $nodeId: () => state.meta.nodeId,
    $mode: () => state.meta.execution.mode,
    // what n8n adds while it paginates (HTTP Request): undefined elsewhere, as there
    $response: () => (state.meta.additional || {}).$response,
    $request: () => (state.meta.additional || {}).$request,
    $pageCount: () => (state.meta.additional || {}).$pageCount,
    $version: () => (state.meta.additional || {}).$version,
    $env: () => { throw new ExpressionError("access to env vars denied",
      "Reading environment variables in expressions is blocked, as in n8n by default (N8N_BLOCK_ENV_ACCESS_IN_NODE)"); },
    // one instant an evaluation, as n8n's data proxy takes DateTime.now() once when it is made
    $now: () => now(),
    $today: () => now().set({ hour: 0, minute: 0, second: 0, millisecond: 0 }),
    DateTime: () => (DateTime || missingLuxon()),
    Duration: () => (luxon ? luxon.Duration : missingLuxon()),
    Interval: () => (luxon ? luxon.Interval : missingLuxon()),
  };
  for (const [name, get] of Object.entries(getters)) Object.defineProperty(scope, name, { get, enumerable: true });
  Object.assign(scope, {
    $: nodeRef,
    $node,
    $items,
    $if: (condition, valueIfTrue, valueIfFalse) => (condition ? valueIfTrue : valueIfFalse),
    $ifEmpty: (value, valueIfEmpty) => (isEmptyValue(value) ? valueIfEmpty : value),
    $min: (...values) => Math.min(...values),
    $max: (...values) => Math.max(...values),
    $jmespath: (object, expression) => {
      if (!jmespath) throw new ExpressionError("$jmespath is not available: the jmespath library is not installed",
        "Run `make venv` (it installs jmespath from the npm registry) or set MINI_N8N_JS_MODULES");
      return jmespath.search(object, expression);
    },
    $fromAI: fromAI, $fromAi: fromAI, $fromai: fromAI,
    // n8n's deny list: these names resolve to an empty object inside expressions
    eval: denied, Function: denied, globalThis: denied, global: denied, window: denied, self: denied,
    document: denied, process: denied, require: denied, Reflect: denied, Proxy: denied, Promise: denied,
    WebAssembly: denied, setTimeout: denied, setInterval: denied, fetch: denied, XMLHttpRequest: denied,
    constructor: denied, escape: denied, unescape: denied,
  });

  // n8n resolves any other name from the expression's data or else an empty object (tournament's
  // variable polyfill): a name it does not provide reads `undefined`, never a ReferenceError.
  // These are the JavaScript globals n8n provides (its allow list and the names it leaves alone);
  // any other free name of a segment is declared (`var name;`) so it reads `undefined` there too.
  const GLOBALS = new Set(("Object Array Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array " +
    "Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array Map WeakMap Set WeakSet Error TypeError " +
    "SyntaxError EvalError RangeError ReferenceError URIError Intl String RegExp Math Number BigInt Infinity NaN " +
    "isFinite isNaN parseFloat parseInt JSON ArrayBuffer SharedArrayBuffer Atomics DataView encodeURI " +
    "encodeURIComponent decodeURI decodeURIComponent Boolean Symbol Date undefined").split(" "));
  const KEYWORDS = new Set(("break case catch class const continue debugger default delete do else export extends " +
    "false finally for function if import in instanceof new null return super switch this throw true try typeof " +
    "var void while with yield let static enum await implements package protected interface private public " +
    "arguments of async get set").split(" "));
  function unknownNames(code) {
    const bare = code.replace(STRINGS, "0").replace(/\/(?![*/])(?:[^/\\\n]|\\.)+\/[a-z]*/g, "0");
    const found = new Set();
    for (const m of bare.matchAll(/(?<![.\w$])[A-Za-z_$][\w$]*/g)) {
      const name = m[0];
      if (!(name in scope) && !GLOBALS.has(name) && !KEYWORDS.has(name)) found.add(name);
    }
    return [...found];
  }

  // ----- templates ------------------------------------------------------------------------------
  const templates = [];
  const compileCode = g.Function; // kept here: expressions themselves see `Function` as {}

  function compile(partsJson) {
    // parts: [[0, "text"], [1, "code"], ...]; a single code part with no text keeps its type
    const parts = JSON.parse(partsJson);
    const compiled = parts.map(([isCode, text]) => {
      if (!isCode) return text;
      const code = text.replace(/[\s;]+$/, "");
      try {
        const unknown = unknownNames(code);
        let fn;
        try {
          fn = compileCode("__scope", (unknown.length ? "var " + unknown.join(", ") + ";\n" : "") +
            "with (__scope) { return (" + code + "\n); }");
        } catch (error) {
          fn = compileCode("__scope", "with (__scope) { return (" + code + "\n); }");
        }
        fn.guarded = guarded(code);
        return fn;
      } catch (error) {
        return { error: new ExpressionError("invalid syntax", String(error && error.message)) };
      }
    });
    templates.push(compiled);
    return templates.length - 1;
  }

  function describe(error) {
    if (error instanceof ExpressionError) {
      return { name: error.name, message: error.message, description: error.description };
    }
    if (error && typeof error === "object" && "message" in error) {
      return { name: String(error.name || "Error"), message: String(error.message) };
    }
    return { name: "Error", message: String(error) };
  }

  // n8n's expression engine (tournament) runs a segment inside try/catch when it reads a variable
  // other than isFinite, isNaN, NaN, Date, RegExp, Math, undefined or accesses a member or calls
  // a function: an error there is handed to its error handler, which re-throws only n8n's own
  // expression errors; anything else (a TypeError, an Error the code throws) leaves the segment
  // `undefined`. An error in an unguarded segment makes the whole expression null.
  const EXEMPT = new Set(["isFinite", "isNaN", "NaN", "Date", "RegExp", "Math", "undefined"]);
  const WORDS = new Set(["new", "typeof", "void", "in", "instanceof", "true", "false", "null", "this"]);
  const STRINGS = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g;
  function guarded(code) {
    const bare = code.replace(STRINGS, "0");
    if (/[\w$\])]\s*[[(]|\?\.|\.\s*[A-Za-z_$]/.test(bare.replace(/\bnew\s+(?:Date|RegExp)\s*\(/g, "("))) return true;
    const names = bare.replace(/\b\d[\w.]*/g, "").match(/[A-Za-z_$][\w$]*/g) || [];
    return names.some((name) => !EXEMPT.has(name) && !WORDS.has(name));
  }

  class Unguarded extends Error {}

  // errors that stay errors: n8n's own (ours: ExpressionError), a request for data, our limits
  const isLoud = (error) => error instanceof ExpressionError || error instanceof NeedData ||
    (error && (error.name === "InternalError" || error.unsupported === true ||
      (error.name === "RangeError" && error.message === "Maximum call stack size exceeded")));

  function evaluatePart(fn) {
    if (fn.error) throw fn.error;
    try {
      return fn.call(denied, scope);
    } catch (error) {
      if (isLoud(error)) throw error;
      if (fn.guarded) return undefined;
      throw error instanceof SyntaxError ? new ExpressionError("invalid syntax") : new Unguarded();
    }
  }

  function checkResult(value) {
    if (typeof value === "function") {
      if (value === nodeRef) throw new ExpressionError("invalid syntax");
      if (DateTime && value === DateTime) throw new ExpressionError("this is a DateTime, please access its methods");
      throw new ExpressionError("this is a function, please add ()");
    }
    if (DateTime && DateTime.isDateTime(value) && !value.isValid) {
      throw new ExpressionError("invalid DateTime", value.invalidExplanation || value.invalidReason || "");
    }
    return value;
  }

  // a segment's text in a template: n8n keeps a value only when `v || v === 0 || v === false`
  function text(value) {
    return value || value === 0 || value === false ? String(value) : "";
  }

  function now() {
    if (!DateTime) return missingLuxon();
    if (state.now === undefined) state.now = DateTime.now();
    return state.now;
  }

  function run(id) {
    const compiled = templates[id];
    state.now = undefined;
    state.needs = [];
    state.item = undefined;
    try {
      if (luxon && state.zoneSet !== state.zone) {
        luxon.Settings.defaultZone = state.zone;
        state.zoneSet = state.zone;
      }
      if (compiled.length === 1 && typeof compiled[0] !== "string") {
        const value = checkResult(evaluatePart(compiled[0]));
        if (state.needs.length) return "n" + JSON.stringify(state.needs);
        if (value === undefined) return "u";
        // NaN and ±Infinity keep their value (JSON would make them null): Python's json reads these words
        if (typeof value === "number" && !isFinite(value)) return "j" + String(value);
        const json = JSON.stringify(value);
        // joined, not concatenated: a long concatenation is a rope string the host cannot read
        return json === undefined ? "u" : ["j", json].join("");
      }
      let out = "";
      for (const part of compiled) {
        out += typeof part === "string" ? part : text(checkResult(evaluatePart(part)));
      }
      if (state.needs.length) return "n" + JSON.stringify(state.needs);
      return ["s", out].join("");
    } catch (error) {
      if (state.needs.length) return "n" + JSON.stringify(state.needs);
      if (error instanceof Unguarded) return "j" + "null";
      return "e" + JSON.stringify(describe(error));
    } finally {
      state.item = undefined;
    }
  }

  function setItem(itemText, itemIndex) {
    state.itemText = itemText;
    state.itemIndex = itemIndex;
    state.item = undefined;
  }

  // the zone's table is provided (provide) before the first run in it
  function enter(metaJson, zone) {
    state.meta = JSON.parse(metaJson);
    state.answers = new Map();
    state.zone = zone;
  }

  function provide(key, reply) {
    if (!key.startsWith("tz\u0000")) {
      state.answers.set(key, reply);
      return;
    }
    state.zones.set(key.slice(3), reply[0] === "j" ? JSON.parse(reply.slice(1)) : null);
    // Luxon remembers a zone it could not read (while its table was still being asked for)
    if (luxon) luxon.Settings.resetCaches();
  }

  function forget() {
    state.answers = new Map();
  }

  // ----- the Code node: a function body run as n8n's JavaScript sandbox runs it -----------------
  // The same globals as expressions, plus `items` (run once for all items) or `item` (once per
  // item), console and Promise; errors are never swallowed; the body runs as an async function.
  const codeTemplates = [];
  const codeLogs = [];
  const codeConsole = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    codeConsole[level] = (...args) => {
      if (codeLogs.length < 100) codeLogs.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    };
  }
  const codeInput = Object.create($input);
  codeInput.all = () => {
    if (state.codeItems === undefined) state.codeItems = data("input", ["all"]);
    return state.codeItems;
  };
  codeInput.first = () => codeInput.all()[0];
  codeInput.last = () => { const all = codeInput.all(); return all[all.length - 1]; };
  function codeScope(perItem) {
    const own = Object.create(scope);
    Object.defineProperty(own, "$input", { value: codeInput });
    Object.defineProperty(own, perItem ? "item" : "items", { get: perItem ? currentItem : codeInput.all });
    for (const name of ["console", "Promise", "setTimeout"]) {
      Object.defineProperty(own, name, { value: name === "console" ? codeConsole : g[name] });
    }
    // what n8n's sandbox has and this engine does not: a clear error when used, never a quiet undefined
    const hostError = (message) => Object.assign(new Error(message), { host: true });
    const unsupported = (what) => () => { throw hostError(what + " is not supported by mini-n8n's Code node"); };
    Object.defineProperty(own, "require", { value: (name) => { throw hostError("Cannot find module '" + name + "'"); } });
    for (const name of ["$getWorkflowStaticData", "$getNodeParameter"]) {
      Object.defineProperty(own, name, { value: unsupported(name + "()") });
    }
    Object.defineProperty(own, "helpers", { value: new g.Proxy({}, { get: (_t, key) => unsupported("helpers." + String(key))() }) });
    return own;
  }
  const scopes = [codeScope(false), codeScope(true)];

  function compileBody(body, perItem) {
    try {
      const fn = compileCode("__scope", "with (__scope) { return (async function __n8nCode() {\n" + body + "\n}).call(__scope); }");
      codeTemplates.push({ fn, perItem });
    } catch (error) {
      codeTemplates.push({ error: describe(error) });
    }
    return codeTemplates.length - 1;
  }

  let pending = null;
  function runBody(id) {
    const code = codeTemplates[id];
    state.now = undefined;
    state.needs = [];
    state.item = undefined;
    state.codeItems = undefined;
    codeLogs.length = 0;
    if (code.error) {
      pending = { done: true, compileError: code.error };
      return "e";
    }
    if (luxon && state.zoneSet !== state.zone) {
      luxon.Settings.defaultZone = state.zone;
      state.zoneSet = state.zone;
    }
    const settled = pending = { done: false };
    code.fn(scopes[code.perItem ? 1 : 0]).then(
      (value) => { settled.done = true; settled.value = value; },
      (error) => { settled.done = true; settled.error = error; });
    return "p";
  }

  // the settled result: "w" still waiting, "n" data needed, "u" undefined, else JSON text of
  // {value, logs} or {error} (one JSON.stringify: a concatenated string reaches the host as a rope)
  function bodyResult() {
    const settled = pending;
    if (!settled.done) return "w";
    if (settled.compileError) return JSON.stringify({ error: settled.compileError });
    if (state.needs.length) return "n" + JSON.stringify(state.needs);
    if (settled.error !== undefined) {
      const error = settled.error;
      const out = describe(error);
      // the code's line: the innermost frame, or for an error of the runtime's own (a helper the
      // code called) the code's frame that called it
      const frames = String(error && error.stack || "").split("\n");
      const own = error && (error.host || error instanceof ExpressionError);
      const frame = /:(\d+):\d+\)/.exec((own ? frames.find((l) => l.includes("at __n8nCode (")) : frames[0]) || "");
      if (frame) out.line = Number(frame[1]) - 3;
      out.thrown = !(error instanceof Error);
      return JSON.stringify({ error: out });
    }
    const value = settled.value;
    if (value === undefined) return "u";
    return JSON.stringify({ value, logs: codeLogs });
  }

  g.__n8n = { compile, run, setItem, enter, provide, forget, ExpressionError, isEmptyValue, util: hostUtil, luxon,
    compileBody, runBody, bodyResult };
})(globalThis);
