// n8n's data-transformation functions ("extensions") on strings, numbers, booleans, arrays,
// objects and dates, written from n8n's documented behaviour. They are added to the built-in
// prototypes as non-enumerable methods, so `$json.name.toTitleCase()` works as in n8n.
(function (g) {
  const n8n = g.__n8n;
  const ExpressionError = n8n.ExpressionError;
  const util = n8n.util;
  const luxon = n8n.luxon;
  const DateTime = luxon ? luxon.DateTime : undefined;

  function define(proto, methods) {
    for (const [name, fn] of Object.entries(methods)) {
      Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
    }
  }
  const fail = (fn, message) => { throw new ExpressionError(fn + "(): " + message); };
  const needLuxon = () => { if (!DateTime) throw new ExpressionError("DateTime is not available: the Luxon library is not installed"); };

  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  const uniqueBy = (list, key) => {
    const out = [];
    for (const v of list) if (!out.some((o) => deepEqual(key(o), key(v)))) out.push(v);
    return out;
  };
  const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const compactValue = (v) => !(v === null || v === undefined || v === "" || v === "nil" ||
    (isPlainObject(v) && Object.keys(v).length === 0));

  // ----- strings -----------------------------------------------------------------------------
  const EMAIL = /([a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,})/;
  const URL_RE = /(https?:\/\/(?:www\.)?[-a-zA-Z0-9@:%._+~#=]{1,256}\.[a-zA-Z0-9()]{1,63}\b[-a-zA-Z0-9()@:%_+.~#?&/=]*)/;
  const URL_HOST = new RegExp("^(?:(?:https?|ftp)://)?(?:mailto:)?(?://)?" +
    "((?:[-\\w]+\\.)+(?:[a-zA-Z]{2,}|xn--[a-zA-Z0-9]+)|localhost|\\d{1,3}(?:\\.\\d{1,3}){3})" +
    "(?::\\d+)?(?:/[^\\s?]*)?(?:\\?[^\\s#]*)?(?:#\\S*)?$", "i");
  const DOMAIN = /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,}$/;
  const SMALL_WORDS = new Set(("a an and as at because but by en for if in neither nor of on only or over per so " +
    "some than that the to up upon v v. versus via vs vs. when with without yet").split(" "));

  function parseUrl(text) {
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/.exec(text.trim());
    if (!m) return null;
    const host = m[2].replace(/^[^@]*@/, "").replace(/:\d+$/, "");
    return { protocol: m[1].toLowerCase(), host, path: m[3] || "/" };
  }

  function toDateTimeFromString(text) {
    needLuxon();
    const tries = [DateTime.fromISO(text), DateTime.fromRFC2822(text), DateTime.fromHTTP(text), DateTime.fromSQL(text)];
    for (const dt of tries) if (dt.isValid) return dt;
    const ms = Date.parse(text);
    if (!isNaN(ms)) return DateTime.fromMillis(ms);
    throw new ExpressionError("toDateTime(): cannot parse the string as a date: " + JSON.stringify(text));
  }

  function removeMarkdown(text) {
    return text
      .replace(/^```[^\n]*\n?|```$/gm, "")
      .replace(/^(-\s*?|\*\s*?|_\s*?){3,}\s*$/gm, "")
      .replace(/^([\s\t]*)([*\-+]|\d+\.)\s+/gm, "$1")
      .replace(/^\s{0,3}>\s?/gm, "")
      .replace(/^\s{0,3}#{1,6}\s+/gm, "")
      .replace(/!\[(.*?)\][[(].*?[\])]/g, "$1")
      .replace(/\[(.*?)\][[(].*?[\])]/g, "$1")
      .replace(/([*_]{1,3})(\S.*?\S{0,1})\1/g, "$2")
      .replace(/~~(.*?)~~/g, "$1")
      .replace(/`(.+?)`/g, "$1")
      .replace(/<[^>]*>/g, "");
  }

  function toInt(text, fn) {
    const n = parseInt(String(text).replace(/^[^\d.+-]+|,/g, ""), 10);
    if (isNaN(n)) fail(fn, "cannot convert " + JSON.stringify(text) + " to a number");
    return n;
  }
  function toFloat(text, fn) {
    const n = parseFloat(String(text).replace(/^[^\d.+-]+|,/g, ""));
    if (isNaN(n)) fail(fn, "cannot convert " + JSON.stringify(text) + " to a number");
    return n;
  }

  define(String.prototype, {
    base64Encode() { return util("base64Encode", String(this), ""); },
    base64Decode() { return util("base64Decode", String(this), ""); },
    extractDomain() {
      const s = String(this);
      const email = EMAIL.exec(s);
      if (email && !s.includes("://")) return email[1].split("@")[1];
      // n8n: the whole text is a host (www. kept), with an optional http(s)/ftp scheme, port, path, query
      const m = URL_HOST.exec(s);
      return m ? m[1] : undefined;
    },
    extractEmail() { const m = EMAIL.exec(String(this)); return m ? m[1] : undefined; },
    extractUrl() { const m = URL_RE.exec(String(this)); return m ? m[1] : undefined; },
    extractUrlPath() { const url = parseUrl(String(this)); return url ? url.path : undefined; },
    hash(algo) { return util("hash", String(this), algo === undefined ? "md5" : String(algo)); },
    isDomain() { return DOMAIN.test(String(this)); },
    isEmail() { return /^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$/.test(String(this)); },
    isEmpty() { return this.length === 0; },
    isNotEmpty() { return this.length > 0; },
    isNumeric() { const s = String(this); return !s.includes(" ") && s !== "" && !isNaN(s) && !isNaN(parseFloat(s)); },
    isUrl() { const u = parseUrl(String(this)); return !!u && /^https?$|^ftp$/.test(u.protocol) && u.host.length > 0; },
    parseJson() {
      try { return JSON.parse(String(this)); } catch (e) {
        throw new ExpressionError("Parsing failed. Check you can parse it with JSON.parse()", String(e.message));
      }
    },
    quote(mark) { const q = mark === undefined ? '"' : String(mark); return q + String(this).split(q).join("\\" + q) + q; },
    removeMarkdown() { return removeMarkdown(String(this)); },
    removeTags() { return String(this).replace(/<[^>]*>?/gm, ""); },
    replaceSpecialChars() { return util("transliterate", String(this), ""); },
    toBoolean() { return !["false", "0", "", "no"].includes(String(this).trim().toLowerCase()); },
    toDateTime() { return toDateTimeFromString(String(this)); },
    toDecimalNumber() { return toFloat(this, "toDecimalNumber"); },
    toFloat() { return toFloat(this, "toFloat"); },
    toNumber() { return toFloat(this, "toNumber"); },
    toInt() { return toInt(this, "toInt"); },
    toInteger() { return toInt(this, "toInteger"); },
    toWholeNumber() { return toInt(this, "toWholeNumber"); },
    toJsonString() { return JSON.stringify(String(this)); },
    toSentenceCase() {
      return String(this).toLowerCase().replace(/(^\s*|[.!?]\s+)(\p{L})/gu, (m, lead, ch) => lead + ch.toUpperCase());
    },
    toSnakeCase() {
      return String(this).toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").trim().replace(/[\s-]+/g, "_");
    },
    toTitleCase() {
      const words = String(this).split(/(\s+)/);
      const last = words.length - 1;
      return words.map((w, i) => {
        if (/^\s+$/.test(w) || w === "") return w;
        if (i !== 0 && i !== last && SMALL_WORDS.has(w.toLowerCase())) return w;
        if (/.\p{Lu}/u.test(w)) return w;  // iPhone, FAANG: a capital after the first letter stays as written
        return w.charAt(0).toUpperCase() + w.slice(1);
      }).join("");
    },
    urlDecode(entire) { return entire ? decodeURI(String(this)) : decodeURIComponent(String(this)); },
    urlEncode(entire) { return entire ? encodeURI(String(this)) : encodeURIComponent(String(this)); },
  });

  // ----- numbers and booleans -------------------------------------------------------------------
  const roundTo = (value, places, how) => {
    const p = places === undefined ? 0 : Number(places);
    return Number(Math[how](Number(value + "e" + p)) + "e-" + p);
  };
  define(Number.prototype, {
    ceil() { return Math.ceil(this); },
    floor() { return Math.floor(this); },
    round(decimalPlaces) { return roundTo(Number(this), decimalPlaces, "round"); },
    abs() { return Math.abs(this); },
    isInteger() { return Number.isInteger(Number(this)); },
    isEven() { if (!Number.isInteger(Number(this))) fail("isEven", "only works on whole numbers"); return this % 2 === 0; },
    isOdd() { if (!Number.isInteger(Number(this))) fail("isOdd", "only works on whole numbers"); return Math.abs(this % 2) === 1; },
    format(locales, options) { return new Intl.NumberFormat(locales === undefined ? "en-US" : locales, options).format(Number(this)); },
    toBoolean() { return Number(this) !== 0; },
    toDateTime(format) {
      needLuxon();
      const n = Number(this);
      if (format === "s") return DateTime.fromSeconds(n);
      if (format === "excel") return DateTime.fromMillis(Math.round((n - 25569) * 86400000), { zone: "utc" });
      if (format === undefined || format === "ms") return DateTime.fromMillis(n);
      return fail("toDateTime", "format must be 'ms', 's' or 'excel'");
    },
  });
  define(Boolean.prototype, {
    toNumber() { return this.valueOf() ? 1 : 0; },
    toInt() { return this.valueOf() ? 1 : 0; },
  });

  // ----- arrays ---------------------------------------------------------------------------------
  const numbersOf = (list, fn) => list.map((v) => {
    if (typeof v === "number") return v;
    if (typeof v === "string" && v.trim() !== "" && !isNaN(Number(v))) return Number(v);
    return fail(fn, "all array elements must be numbers");
  });
  const keysOf = (args) => [].concat(...args.map((a) => String(a).split(",").map((s) => s.trim()))).filter(Boolean);
  define(Array.prototype, {
    average() { if (!this.length) return 0; return numbersOf(this, "average").reduce((a, b) => a + b, 0) / this.length; },
    chunk(size) {
      const n = Number(size);
      if (!(n > 0)) fail("chunk", "size must be a positive number");
      const out = [];
      for (let i = 0; i < this.length; i += n) out.push(this.slice(i, i + n));
      return out;
    },
    compact() { return this.filter(compactValue); },
    difference(other) { if (!Array.isArray(other)) fail("difference", "argument must be an array"); return this.filter((v) => !other.some((o) => deepEqual(o, v))); },
    intersection(other) { if (!Array.isArray(other)) fail("intersection", "argument must be an array"); return uniqueBy(this.filter((v) => other.some((o) => deepEqual(o, v))), (v) => v); },
    union(other) { if (!Array.isArray(other)) fail("union", "argument must be an array"); return uniqueBy(this.concat(other), (v) => v); },
    first() { return this[0]; },
    last() { return this[this.length - 1]; },
    isEmpty() { return this.length === 0; },
    isNotEmpty() { return this.length > 0; },
    max() { return Math.max(...numbersOf(this, "max")); },
    min() { return Math.min(...numbersOf(this, "min")); },
    sum() { return numbersOf(this, "sum").reduce((a, b) => a + b, 0); },
    merge(other) {
      const all = other === undefined ? this : this.concat(other);
      return all.reduce((acc, v) => (isPlainObject(v) ? Object.assign(acc, v) : acc), {});
    },
    pluck(...fields) {
      const names = keysOf(fields);
      if (!names.length) return this.slice();
      const picked = this.filter(isPlainObject).map((v) => {
        if (names.length === 1) return v[names[0]];
        const out = {};
        for (const n of names) if (n in v) out[n] = v[n];
        return out;
      });
      return picked.filter((v) => v !== undefined);
    },
    randomItem() { return this[Math.floor(Math.random() * this.length)]; },
    removeDuplicates(...keys) { return this.unique(...keys); },
    unique(...keys) {
      const names = keysOf(keys);
      if (!names.length) return uniqueBy(this, (v) => v);
      return uniqueBy(this, (v) => (isPlainObject(v) ? names.map((n) => v[n]) : v));
    },
    renameKeys(...pairs) {
      if (pairs.length % 2) fail("renameKeys", "give pairs of names: old, new");
      return this.map((v) => {
        if (!isPlainObject(v)) return v;
        const out = Object.assign({}, v);
        for (let i = 0; i < pairs.length; i += 2) {
          if (pairs[i] in out) { out[pairs[i + 1]] = out[pairs[i]]; delete out[pairs[i]]; }
        }
        return out;
      });
    },
    smartJoin(keyField, valueField) {
      const out = {};
      for (const v of this) {
        if (isPlainObject(v) && v[keyField] !== undefined && v[keyField] !== null && v[keyField] !== "") {
          const value = v[valueField];
          out[String(v[keyField]).trim()] = typeof value === "string" ? value.trim() : value;
        }
      }
      return out;
    },
    toJsonString() { return JSON.stringify(this); },
    append(...values) { return this.concat(values); },
  });

  // ----- objects ----------------------------------------------------------------------------------
  define(Object.prototype, {
    isEmpty() { return Object.keys(this).length === 0; },
    isNotEmpty() { return Object.keys(this).length > 0; },
    hasField(name) { return Object.prototype.hasOwnProperty.call(this, name); },
    removeField(name) { const out = Object.assign({}, this); delete out[name]; return out; },
    removeFieldsContaining(text) {
      const out = {};
      for (const [k, v] of Object.entries(this)) if (!(typeof v === "string" && v.includes(text))) out[k] = v;
      return out;
    },
    keepFieldsContaining(text) {
      const out = {};
      for (const [k, v] of Object.entries(this)) if (typeof v === "string" && v.includes(text)) out[k] = v;
      return out;
    },
    compact() {
      const out = {};
      for (const [k, v] of Object.entries(this)) if (compactValue(v)) out[k] = v;
      return out;
    },
    // n8n has merge() for arrays only: on anything else its extend() names the type that has it
    merge() { throw new ExpressionError('merge() is only callable on type "Array"'); },
    toJsonString() { return JSON.stringify(this); },
    urlEncode() {
      return Object.entries(this).map(([k, v]) =>
        encodeURIComponent(k).replace(/%20/g, "+") + "=" + encodeURIComponent(String(v)).replace(/%20/g, "+")).join("&");
    },
    keys() { return Object.keys(this); },
    values() { return Object.values(this); },
  });

  // ----- dates (JavaScript Date and Luxon DateTime) ------------------------------------------------
  const UNITS = { second: "seconds", minute: "minutes", hour: "hours", day: "days", week: "weeks", month: "months",
    quarter: "quarters", year: "years", millisecond: "milliseconds" };
  const unitOf = (u, dflt) => {
    const raw = u === undefined ? dflt : String(u);
    const plural = UNITS[raw] || raw;
    if (!Object.values(UNITS).includes(plural)) fail("date", "unknown time unit '" + raw + "'");
    return plural;
  };
  const singular = (u) => unitOf(u, "week").replace(/s$/, "");
  const asDateTime = (v) => (v instanceof Date ? DateTime.fromJSDate(v) : DateTime.isDateTime(v) ? v : toDateTimeFromString(String(v)));

  function dateMethods(wrap) {
    return {
      beginningOf(unit) { needLuxon(); return wrap(this, asDateTime(this).startOf(singular(unit))); },
      endOfMonth() { needLuxon(); return wrap(this, asDateTime(this).endOf("month")); },
      extract(part) {
        needLuxon();
        const p = part === undefined ? "week" : String(part);
        const dt = asDateTime(this);
        if (p === "week" || p === "weeks") return dt.weekNumber;
        if (p === "yearDayNumber") return dt.ordinal;
        return dt.get(singular(p));
      },
      format(fmt) { needLuxon(); if (fmt === undefined) fail("format", "needs a format string"); return asDateTime(this).toFormat(String(fmt)); },
      isBetween(a, b) {
        needLuxon();
        const t = asDateTime(this).toMillis();
        const x = asDateTime(a).toMillis();
        const y = asDateTime(b).toMillis();
        return t > Math.min(x, y) && t < Math.max(x, y);
      },
      isDst() { needLuxon(); return asDateTime(this).isInDST; },
      isInLast(n, unit) {
        needLuxon();
        const now = DateTime.now();
        const since = now.minus({ [unitOf(unit, "minutes")]: n === undefined ? 0 : Number(n) });
        const t = asDateTime(this);
        return t >= since && t <= now;
      },
      isWeekend() { needLuxon(); return asDateTime(this).weekday >= 6; },
      toDateTime() { needLuxon(); return asDateTime(this); },
    };
  }
  define(Date.prototype, Object.assign(dateMethods((self, dt) => dt.toJSDate()), {
    plus(n, unit) { needLuxon(); return DateTime.fromJSDate(this).plus({ [unitOf(unit, "milliseconds")]: Number(n) }).toJSDate(); },
    minus(n, unit) { needLuxon(); return DateTime.fromJSDate(this).minus({ [unitOf(unit, "milliseconds")]: Number(n) }).toJSDate(); },
  }));
  if (DateTime) {
    const proto = DateTime.prototype;
    const nativePlus = proto.plus;
    const nativeMinus = proto.minus;
    define(proto, Object.assign(dateMethods((self, dt) => dt), {
      plus(n, unit) { return typeof n === "number" ? nativePlus.call(this, { [unitOf(unit, "milliseconds")]: n }) : nativePlus.call(this, n); },
      minus(n, unit) { return typeof n === "number" ? nativeMinus.call(this, { [unitOf(unit, "milliseconds")]: n }) : nativeMinus.call(this, n); },
    }));
  }
  delete g.__n8n.util;
})(globalThis);
