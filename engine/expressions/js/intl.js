// A small `Intl` for an engine built without ICU: English (en-US) formatting, with time-zone
// offsets from the host's tz database (Python's zoneinfo), handed in as transition tables.
// Luxon needs exactly this much: DateTimeFormat#formatToParts for zone offsets and names,
// resolvedOptions() for the default locale and zone, and NumberFormat for number.format().
// The runtime (runtime.js) sets `zoneTable(name)` -> [[startMs, offsetMinutes, abbr], ...] and
// `defaultZone()` on globalThis.__intlHost before anything formats a date.
(function (g) {
  "use strict";
  const host = { zoneTable: null, defaultZone: () => "UTC" };
  Object.defineProperty(g, "__intlHost", { value: host, configurable: true });
  const hostZone = () => host.defaultZone();
  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const pad2 = (n) => (n < 10 ? "0" : "") + n;
  // what this Intl cannot do: an error the runtime never turns into an empty value
  const unsupported = (message) => Object.assign(new RangeError(message), { unsupported: true });

  function checkLocale(locales) {
    const list = locales === undefined ? [] : [].concat(locales);
    for (const loc of list) {
      if (typeof loc !== "string" || !/^en(-|$)/i.test(loc)) {
        throw unsupported("Intl: only English (en) locales are available, not " + JSON.stringify(loc));
      }
    }
    return list.length ? list[0] : "en-US";
  }

  // [offset minutes, abbreviation] of a zone at an instant: the last period starting at or before it
  function period(zone, ms) {
    const table = host.zoneTable(zone);
    if (!table) throw new RangeError("Invalid time zone specified: " + zone);
    let lo = 0;
    let hi = table.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (table[mid][0] <= ms) lo = mid; else hi = mid - 1;
    }
    return table[lo];
  }
  host.offsetAt = (zone, ms) => period(zone, ms)[1];

  function zoneFields(zone, ms) {
    const [, offset, abbr] = period(zone, ms);
    const local = new Date(ms + offset * 60000);
    return { year: local.getUTCFullYear(), month: local.getUTCMonth() + 1, day: local.getUTCDate(),
      hour: local.getUTCHours(), minute: local.getUTCMinutes(), second: local.getUTCSeconds(),
      weekday: local.getUTCDay(), offset, abbr };
  }

  function longOffsetName(offset) {
    if (offset === 0) return "GMT";
    const sign = offset < 0 ? "-" : "+";
    const a = Math.abs(offset);
    return "GMT" + sign + pad2(Math.floor(a / 60)) + ":" + pad2(a % 60);
  }

  class DateTimeFormat {
    constructor(locales, options) {
      this._locale = checkLocale(locales);
      const o = Object.assign({}, options || {});
      this._zone = o.timeZone === undefined ? hostZone() : String(o.timeZone);
      zoneFields(this._zone, 0); // validates the zone
      const hasField = ["weekday", "era", "year", "month", "day", "hour", "minute", "second",
        "timeZoneName", "dateStyle", "timeStyle"].some((k) => o[k] !== undefined);
      if (!hasField) { o.year = "numeric"; o.month = "numeric"; o.day = "numeric"; }
      this._o = o;
    }
    resolvedOptions() {
      return Object.assign({}, this._o, { locale: this._locale === "en" ? "en-US" : this._locale,
        calendar: "gregory", numberingSystem: "latn", timeZone: this._zone });
    }
    formatToParts(date) {
      const ms = date === undefined ? Date.now() : +date;
      if (!isFinite(ms)) throw new RangeError("Invalid time value");
      const f = zoneFields(this._zone, ms);
      const o = this._o;
      const parts = [];
      const lit = (v) => parts.push({ type: "literal", value: v });
      const add = (type, value) => parts.push({ type, value: String(value) });
      const h12 = o.hour12 === undefined ? o.hourCycle !== "h23" && o.hourCycle !== "h24" : o.hour12;
      const textMonth = o.month === "long" || o.month === "short" || o.month === "narrow";
      if (o.weekday) { add("weekday", o.weekday === "long" ? DAYS[f.weekday] : DAYS[f.weekday].slice(0, 3)); lit(", "); }
      if (textMonth) {
        const m = MONTHS[f.month - 1];
        add("month", o.month === "long" ? m : o.month === "short" ? m.slice(0, 3) : m[0]);
        if (o.day) { lit(" "); add("day", o.day === "2-digit" ? pad2(f.day) : f.day); }
        if (o.year) { lit(", "); add("year", f.year); }
      } else {
        const date = [];
        if (o.month) date.push(["month", o.month === "2-digit" ? pad2(f.month) : f.month]);
        if (o.day) date.push(["day", o.day === "2-digit" ? pad2(f.day) : f.day]);
        if (o.year) date.push(["year", o.year === "2-digit" ? pad2(f.year % 100) : f.year]);
        date.forEach(([t, v], i) => { if (i) lit("/"); add(t, v); });
      }
      if (o.era) { lit(" "); add("era", f.year > 0 ? "AD" : "BC"); }
      if (o.hour || o.minute || o.second) {
        if (parts.length) lit(", ");
        let hour = f.hour;
        let period = "";
        if (h12) { period = hour < 12 ? "AM" : "PM"; hour = hour % 12 || 12; }
        const time = [];
        if (o.hour) time.push(["hour", o.hour === "2-digit" || !h12 ? pad2(hour) : hour]);
        if (o.minute) time.push(["minute", pad2(f.minute)]);
        if (o.second) time.push(["second", pad2(f.second)]);
        time.forEach(([t, v], i) => { if (i) lit(":"); add(t, v); });
        if (period) { lit(" "); add("dayPeriod", period); }
      }
      if (o.timeZoneName) {
        lit(" ");
        const short = o.timeZoneName === "short" || o.timeZoneName === "shortGeneric";
        add("timeZoneName", short && f.abbr && !/^[+-]/.test(f.abbr) ? f.abbr : longOffsetName(f.offset));
      }
      return parts;
    }
    format(date) { return this.formatToParts(date).map((p) => p.value).join(""); }
    static supportedLocalesOf(locales) { return [].concat(locales || []).filter((l) => /^en(-|$)/i.test(l)); }
  }

  function group(intPart) {
    return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  class NumberFormat {
    constructor(locales, options) {
      this._locale = checkLocale(locales);
      const o = Object.assign({}, options || {});
      if (o.style && o.style !== "decimal" && o.style !== "percent") {
        throw unsupported("Intl.NumberFormat: style '" + o.style + "' is not available here");
      }
      this._o = o;
    }
    resolvedOptions() { return Object.assign({ locale: "en-US", numberingSystem: "latn" }, this._o); }
    format(value) {
      let n = Number(value);
      const o = this._o;
      if (Number.isNaN(n)) return "NaN";
      if (!isFinite(n)) return n < 0 ? "-∞" : "∞";
      if (o.style === "percent") n *= 100;
      const minF = o.minimumFractionDigits !== undefined ? o.minimumFractionDigits : 0;
      const maxF = o.maximumFractionDigits !== undefined ? Math.max(o.maximumFractionDigits, minF)
        : Math.max(minF, o.style === "percent" ? 0 : 3);
      let text = Math.abs(n).toFixed(maxF);
      if (text.indexOf(".") >= 0) {
        let [i, f] = text.split(".");
        while (f.length > minF && f.endsWith("0")) f = f.slice(0, -1);
        text = f.length ? i + "." + f : i;
      }
      let [i, f] = text.split(".");
      if (o.minimumIntegerDigits) i = i.padStart(o.minimumIntegerDigits, "0");
      if (o.useGrouping !== false) i = group(i);
      const sign = n < 0 && Number(text) !== 0 ? "-" : "";
      return sign + i + (f !== undefined ? "." + f : "") + (o.style === "percent" ? "%" : "");
    }
    formatToParts(value) { return [{ type: "literal", value: this.format(value) }]; }
    static supportedLocalesOf(locales) { return [].concat(locales || []).filter((l) => /^en(-|$)/i.test(l)); }
  }

  Object.defineProperty(g, "Intl", { value: { DateTimeFormat, NumberFormat }, writable: false, configurable: false });
})(globalThis);
