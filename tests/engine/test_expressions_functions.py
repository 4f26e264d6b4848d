"""n8n's data-transformation functions on strings, numbers, booleans, arrays, objects and dates."""

from __future__ import annotations

from typing import Any

import pytest

from engine.expressions import evaluate

ITEM = {"text": "hello world", "url": "https://www.example.com/orders/1/details?x=1", "n": 3.14159,
        "people": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}, {"name": "Ada", "age": 36}],
        "obj": {"a": 1, "b": "", "c": None, "d": "keep me"}}

CASES: list[tuple[str, Any]] = [
    # strings
    ("'hello'.base64Encode()", "aGVsbG8="),
    ("'aGVsbG8='.base64Decode()", "hello"),
    ("$json.url.extractDomain()", "www.example.com"),
    ("'ftp://files.example.org:21/a'.extractDomain()", "files.example.org"),
    ("'not a url'.extractDomain()", None),
    ("'write to ada@example.org today'.extractEmail()", "ada@example.org"),
    ("'see https://n8n.io/docs now'.extractUrl()", "https://n8n.io/docs"),
    ("$json.url.extractUrlPath()", "/orders/1/details"),
    ("'abc'.hash()", "900150983cd24fb0d6963f7d28e17f72"),
    ("'abc'.hash('sha256')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("'example.com'.isDomain()", True),
    ("'not a domain'.isDomain()", False),
    ("'ada@example.org'.isEmail()", True),
    ("'ada@'.isEmail()", False),
    ("''.isEmpty()", True),
    ("'x'.isNotEmpty()", True),
    ("'12.5'.isNumeric()", True),
    ("'12a'.isNumeric()", False),
    ("'https://example.com'.isUrl()", True),
    ("'example'.isUrl()", False),
    ("'{\"a\": [1]}'.parseJson()", {"a": [1]}),
    ("'say'.quote()", '"say"'),
    ("'it\"s'.quote()", '"it\\"s"'),
    ("\"# Title\\n**bold** and [a link](https://x.y)\".removeMarkdown()", "Title\nbold and a link"),
    ("'<p>Hi <b>there</b></p>'.removeTags()", "Hi there"),
    ("'Crème brûlée'.replaceSpecialChars()", "Creme brulee"),
    ("'no'.toBoolean()", False),
    ("'yes'.toBoolean()", True),
    ("'2024-03-05T10:00:00Z'.toDateTime().toUTC().toISO()", "2024-03-05T10:00:00.000Z"),
    ("'3.5'.toDecimalNumber()", 3.5),
    ("'3.5'.toFloat()", 3.5),
    ("'42px'.toInt()", 42),
    ("'42.9'.toWholeNumber()", 42),
    ("'hello world. how are you?'.toSentenceCase()", "Hello world. How are you?"),
    ("'Hello World-wide'.toSnakeCase()", "hello_world_wide"),
    ("'the lord of the rings'.toTitleCase()", "The Lord of the Rings"),
    ("'iPhone sales at FAANG'.toTitleCase()", "iPhone Sales at FAANG"),
    ("'a%20b'.urlDecode()", "a b"),
    ("'a b&c'.urlEncode()", "a%20b%26c"),
    ("'a b/c'.urlEncode(true)", "a%20b/c"),
    # numbers and booleans
    ("(1.2).ceil()", 2),
    ("(1.8).floor()", 1),
    ("$json.n.round(2)", 3.14),
    ("(2.5).round()", 3),
    ("(1234567.891).format()", "1,234,567.891"),
    ("(0.256).format('en-US', { style: 'percent' })", "26%"),
    ("(4).isEven()", True),
    ("(3).isOdd()", True),
    ("(0).toBoolean()", False),
    ("(0).toDateTime().toUTC().toISO()", "1970-01-01T00:00:00.000Z"),
    ("(1).toDateTime('s').toMillis()", 1000),
    ("(45000).toDateTime('excel').toISODate()", "2023-03-15"),
    ("true.toNumber()", 1),
    # arrays
    ("[1, 2, 3, 4].average()", 2.5),
    ("[1, 2, 3, 4, 5].chunk(2)", [[1, 2], [3, 4], [5]]),
    ("[0, null, '', 'a', {}, [], undefined].compact()", [0, "a", []]),
    ("[1, 2, 3].difference([2])", [1, 3]),
    ("[1, 2, 3].intersection([3, 2, 9])", [2, 3]),
    ("[1, 2].union([2, 3])", [1, 2, 3]),
    ("[4, 5].first()", 4),
    ("[4, 5].last()", 5),
    ("[].isEmpty()", True),
    ("[1].isNotEmpty()", True),
    ("[3, 9, 1].max()", 9),
    ("[3, 9, 1].min()", 1),
    ("[1, '2', 3.5].sum()", 6.5),
    ("[{ a: 1 }, { b: 2 }].merge([{ c: 3 }])", {"a": 1, "b": 2, "c": 3}),
    ("$json.people.pluck('name')", ["Ada", "Alan", "Ada"]),
    ("$json.people.pluck('name', 'age').length", 3),
    ("[7].randomItem()", 7),
    ("[1, 1, 2].removeDuplicates()", [1, 2]),
    ("$json.people.unique('name').length", 2),
    ("$json.people.renameKeys('name', 'who')[0]", {"who": "Ada", "age": 36}),
    ("[{ type: 'fruit', name: 'apple' }, { type: 'veg', name: 'carrot' }].smartJoin('type', 'name')",
     {"fruit": "apple", "veg": "carrot"}),
    ("[1, 'a'].toJsonString()", '[1,"a"]'),
    ("[1].append(2, 3)", [1, 2, 3]),
    # objects
    ("({}).isEmpty()", True),
    ("$json.obj.isNotEmpty()", True),
    ("$json.obj.hasField('a')", True),
    ("$json.obj.removeField('a').hasField('a')", False),
    ("$json.obj.removeFieldsContaining('keep')", {"a": 1, "b": "", "c": None}),
    ("$json.obj.keepFieldsContaining('keep')", {"d": "keep me"}),
    ("$json.obj.compact()", {"a": 1, "d": "keep me"}),
    ("({ a: 1 }).toJsonString()", '{"a":1}'),
    ("({ q: 'a b', n: 1 }).urlEncode()", "q=a+b&n=1"),
    ("({ a: 1, b: 2 }).keys()", ["a", "b"]),
    ("({ a: 1, b: 2 }).values()", [1, 2]),
    # dates (Luxon DateTime and JavaScript Date)
    ("DateTime.fromISO('2024-03-06T10:20:30Z').toUTC().beginningOf('month').toISO()", "2024-03-01T00:00:00.000Z"),
    ("DateTime.fromISO('2024-02-06T10:20:30Z').toUTC().endOfMonth().toISO()", "2024-02-29T23:59:59.999Z"),
    ("DateTime.fromISO('2024-03-06T10:20:30Z').toUTC().extract('month')", 3),
    ("DateTime.fromISO('2024-03-06T10:20:30Z').toUTC().extract()", 10),
    ("DateTime.fromISO('2024-03-06T10:20:30Z').toUTC().format('yyyy LLL dd')", "2024 Mar 06"),
    ("DateTime.fromISO('2024-03-06').isBetween('2024-03-01', '2024-03-31')", True),
    ("DateTime.fromISO('2024-07-06T12:00:00Z').setZone('Europe/Berlin').isDst()", True),
    ("$now.minus(5, 'minutes').isInLast(10, 'minutes')", True),
    ("DateTime.fromISO('2024-03-09').isWeekend()", True),
    ("DateTime.fromISO('2024-03-06T00:00:00Z').toUTC().plus(2, 'days').toISODate()", "2024-03-08"),
    ("DateTime.fromISO('2024-03-06T00:00:00Z').toUTC().minus(1, 'month').toISODate()", "2024-02-06"),
    ("DateTime.fromISO('2024-03-06T00:00:00Z').toUTC().plus({ hours: 1 }).hour", 1),
    ("new Date('2024-03-06T00:00:00Z').toDateTime().toUTC().toISO()", "2024-03-06T00:00:00.000Z"),
    ("new Date('2024-03-06T00:00:00Z').plus(1, 'day').toISOString()", "2024-03-07T00:00:00.000Z"),
    ("new Date('2024-03-09T12:00:00Z').isWeekend()", True),
]


@pytest.mark.parametrize(("code", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_function(code: str, expected: Any) -> None:
    assert evaluate("={{ " + code + " }}", ITEM) == expected


def test_every_documented_function_has_a_case() -> None:
    documented = """base64Encode base64Decode extractDomain extractEmail extractUrl extractUrlPath hash isDomain
    isEmail isEmpty isNotEmpty isNumeric isUrl parseJson quote removeMarkdown removeTags replaceSpecialChars
    toBoolean toDateTime toDecimalNumber toFloat toInt toSentenceCase toSnakeCase toTitleCase toWholeNumber
    urlDecode urlEncode ceil floor format isEven isOdd round average chunk compact difference intersection first
    last max merge min pluck randomItem removeDuplicates renameKeys smartJoin sum toJsonString union unique
    hasField removeField removeFieldsContaining keepFieldsContaining beginningOf endOfMonth extract isBetween isDst
    isInLast isWeekend minus plus""".split()
    tested = " ".join(code for code, _ in CASES)
    assert [name for name in documented if f".{name}(" not in tested] == []
