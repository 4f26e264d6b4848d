"""Webhook, Respond to Webhook, Form Trigger and Schedule Trigger as n8n 1.123 runs them: their
items (the expected values are what real n8n produced for the same input), the response a
Respond to Webhook node makes, how their runs start, the schedule's cron expressions."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from engine.executor import Engine
from engine.start import StartError
from engine.workflow import parse_workflow
from nodes.triggers.cron import Cron, CronError
from nodes.triggers.form_trigger import form_item, form_path, render_form
from nodes.triggers.respond_to_webhook import response_of
from nodes.triggers.schedule_trigger import RecurrenceCheck, Rule, rules, schedule_item
from nodes.triggers.webhook import response_settings, webhook_path
from engine.errors import NodeOperationError
from tests.builders import link, node

WEBHOOK = "n8n-nodes-base.webhook"
RESPOND = "n8n-nodes-base.respondToWebhook"
FORM = "n8n-nodes-base.formTrigger"
SCHEDULE = "n8n-nodes-base.scheduleTrigger"
# real n8n's item for POST /webhook/t-respall with {"k": 1}
REQUEST = {"headers": {"host": "localhost:5771", "user-agent": "curl/7.88.1", "accept": "*/*",
                       "content-type": "application/json", "content-length": "7"},
           "params": {}, "query": {}, "body": {"k": 1}, "webhookUrl": "http://localhost:5771/webhook/t-respall",
           "executionMode": "production"}


def respond_workflow(parameters: dict, version: float = 1.5, trigger: str = WEBHOOK) -> dict:
    connections: dict = {}
    link(connections, "Webhook", "Respond")
    return {"name": "respond", "nodes": [
        node("Webhook", trigger, {"httpMethod": "POST", "path": "t", "responseMode": "responseNode"}, webhookId="w1"),
        node("Respond", RESPOND, parameters, typeVersion=version),
    ], "connections": connections}


async def test_respond_to_webhook_keeps_its_response_and_outputs_it_as_n8n_does(engine: Engine) -> None:
    wf = parse_workflow(respond_workflow({"respondWith": "allIncomingItems", "enableResponseOutput": True,
                                          "options": {"responseKey": "data.items"}}))
    state = await engine.run(wf, start="Webhook", items=[{"json": REQUEST}])
    assert state.status == "success", state.error
    # n8n 1.123's run data of this node for that request
    assert state.run_data["Respond"][0].data["main"] == [
        [{"json": REQUEST, "pairedItem": {"item": 0}}],
        [{"json": {"response": {"body": {"data": {"items": [REQUEST]}}, "headers": {}, "statusCode": 200}},
          "pairedItem": {"item": 0}}]]
    made = response_of(state)
    assert state.run_data["Respond"][0].metadata["webhookResponse"] == made
    assert made is not None and made["body"] == {"data": {"items": [REQUEST]}} and made["statusCode"] == 200


@pytest.mark.parametrize(("parameters", "expected"), [
    ({"respondWith": "json", "responseBody": '={{ {"got": $json.body.k} }}',
      "options": {"responseCode": 201, "responseHeaders": {"entries": [{"name": "X-Thing", "value": "yes"}]}}},
     {"body": {"got": 1}, "headers": {"x-thing": "yes"}, "statusCode": 201}),
    ({"respondWith": "text", "responseBody": "=got {{ $json.body.k }}"}, {"body": "got 1", "headers": {}, "statusCode": 200}),
    ({"respondWith": "noData"}, {"headers": {}, "statusCode": 200}),
    ({"respondWith": "redirect", "redirectURL": "https://example.com/x"},
     {"headers": {"location": "https://example.com/x"}, "statusCode": 307}),
    ({}, {"body": REQUEST, "headers": {}, "statusCode": 200}),
])
async def test_each_respond_with(engine: Engine, parameters: dict, expected: dict) -> None:
    state = await engine.run(parse_workflow(respond_workflow(parameters, 1.1)), start="Webhook", items=[{"json": REQUEST}])
    assert state.status == "success", state.error
    made = response_of(state)
    assert made is not None
    assert made == expected
    assert len(state.run_data["Respond"][0].data["main"]) == 1  # v1.1: one output


async def test_respond_to_webhook_errors_in_n8n_words(engine: Engine) -> None:
    bad_json = await engine.run(parse_workflow(respond_workflow({"respondWith": "json", "responseBody": "{nope"})),
                                start="Webhook", items=[{"json": REQUEST}])
    assert bad_json.status == "error" and bad_json.error.message == "Invalid JSON in 'Response Body' field"
    jwt = await engine.run(parse_workflow(respond_workflow({"respondWith": "jwt"})), start="Webhook", items=[{"json": REQUEST}])
    assert jwt.status == "error" and 'responds with "jwt", which mini-n8n does not support' in jwt.error.message
    alone = parse_workflow({"name": "alone", "nodes": [node("Go", "n8n-nodes-base.manualTrigger"),
                                                       node("Respond", RESPOND, {}, typeVersion=1.1)],
                            "connections": {"Go": {"main": [[{"node": "Respond", "type": "main", "index": 0}]]}}})
    state = await engine.run(alone)
    assert state.status == "error" and state.error.message == "No Webhook node found in the workflow"


def test_a_webhook_or_form_trigger_starts_only_with_its_request(engine: Engine) -> None:
    for trigger in (WEBHOOK, FORM):
        wf = parse_workflow(respond_workflow({}, trigger=trigger))
        with pytest.raises(StartError, match="starts a run with the request it receives: serve the workflow with"):
            engine.start_node(wf)
        with pytest.raises(StartError, match='--trigger "Webhook" --input JSON'):
            engine.start_node(wf, trigger="Webhook")
        assert engine.start_node(wf, trigger="Webhook", injected=True).name == "Webhook"
        pinned = parse_workflow({**respond_workflow({}, trigger=trigger), "pinData": {"Webhook": [{"json": REQUEST}]}})
        assert engine.start_node(pinned).name == "Webhook"


def test_webhook_paths_and_response_settings_as_n8n_reads_them() -> None:
    assert webhook_path({"path": "/hello/"}, "w1") == "hello"
    assert webhook_path({"path": "user/:id"}, "w1") == "w1/user/:id"
    assert webhook_path({"path": ""}, "w1") == "w1"
    assert form_path({"options": {"path": "f-one"}}, "w1") == "f-one" and form_path({}, "w1") == "w1"
    v1 = response_settings({"responseCode": 202, "options": {"responseData": "custom text"}}, 1)
    assert (v1.mode, v1.code, v1.data) == ("onReceived", 202, "custom text")
    v2 = response_settings({"responseMode": "lastNode", "options": {"responseCode": {"values": {"responseCode": "customCode",
                                                                                               "customCode": 418}}}}, 2)
    assert (v2.mode, v2.code, v2.data) == ("lastNode", 418, "firstEntryJson")
    assert response_settings({"options": {"noResponseBody": True}}, 2).data == "noData"


FORM_PARAMETERS = {"formTitle": "Contact", "formDescription": "Say hi", "formFields": {"values": [
    {"fieldLabel": "Name", "requiredField": True}, {"fieldLabel": "Age", "fieldType": "number"},
    {"fieldLabel": "Colors", "fieldType": "checkbox", "fieldOptions": {"values": [{"option": "red"}, {"option": "blue"}]}},
    {"fieldLabel": "Pick", "fieldType": "radio", "fieldOptions": {"values": [{"option": "x"}, {"option": "y"}]}},
    {"fieldLabel": "Kind", "fieldType": "dropdown", "fieldOptions": {"values": [{"option": "a"}, {"option": "b"}]}},
    {"fieldName": "secret", "fieldType": "hiddenField", "fieldValue": "s1"}, {"fieldLabel": "Empty"}]},
    "options": {"path": "f-one"}}


def test_a_form_submission_is_n8ns_item() -> None:
    posted = {"field-0": [" Bob "], "field-1": ["41"], "field-2": ['["red","blue"]'], "field-3": ['["y"]'], "field-4": ["b"],
              "field-5": ["s1"]}
    at = datetime(2026, 12, 1, 17, 13, 13, 293000, tzinfo=timezone.utc)
    item = form_item(FORM_PARAMETERS, 2.2, posted, {"ref": "mail"}, "production", "UTC", now=at)
    # n8n 1.123 (GENERIC_TIMEZONE=UTC) for the same multipart post to /form/f-one?ref=mail
    assert item == {"json": {"Name": "Bob", "Age": 41, "Colors": ["red", "blue"], "Pick": "y", "Kind": "b", "secret": "s1",
                             "Empty": None, "submittedAt": "2026-12-01T17:13:13.293Z", "formMode": "production",
                             "formQueryParameters": {"ref": "mail"}}}
    berlin = form_item(FORM_PARAMETERS, 2.2, {"field-2": ["red", "blue"]}, {}, "production", "Europe/Berlin", now=at)
    assert berlin["json"]["Colors"] == ["red", "blue"] and berlin["json"]["submittedAt"] == "2026-12-01T18:13:13.293+01:00"
    assert "formQueryParameters" not in berlin["json"]
    old = form_item(FORM_PARAMETERS, 2, {}, {}, "production", "Europe/Berlin", now=at)  # v2: UTC unless asked
    assert old["json"]["submittedAt"] == "2026-12-01T17:13:13.293Z"
    page = render_form(FORM_PARAMETERS)
    assert "<h1>Contact</h1>" in page and 'name="field-0"' in page and 'type="checkbox" name="field-2" value="red"' in page
    assert 'type="hidden" name="field-5" value="s1"' in page


def test_the_schedule_item_is_n8ns() -> None:
    moment = datetime(2026, 12, 1, 17, 13, 5, 2000, tzinfo=ZoneInfo("UTC"))
    # n8n 1.123's item for the firing at that moment (GENERIC_TIMEZONE=UTC)
    assert schedule_item(moment, "UTC")["json"] == {
        "timestamp": "2026-12-01T17:13:05.002+00:00", "Readable date": "December 1st 2026, 5:13:05 pm",
        "Readable time": "5:13:05 pm", "Day of week": "Tuesday", "Year": "2026", "Month": "December",
        "Day of month": "01", "Hour": "17", "Minute": "13", "Second": "05", "Timezone": "UTC (UTC+00:00)"}
    morning = schedule_item(datetime(2026, 7, 22, 0, 4, 9, tzinfo=ZoneInfo("America/New_York")), "America/New_York")["json"]
    assert morning["Readable date"] == "July 22nd 2026, 12:04:09 am" and morning["Timezone"] == "America/New_York (UTC-04:00)"
    assert morning["timestamp"] == "2026-07-22T00:04:09.000-04:00" and morning["Day of week"] == "Wednesday"


async def test_a_schedule_trigger_run_by_hand_starts_with_the_item_for_now(engine: Engine) -> None:
    wf = parse_workflow({"name": "s", "settings": {"timezone": "Asia/Tokyo"}, "connections": {}, "nodes": [
        node("Schedule", SCHEDULE, {"rule": {"interval": [{"field": "seconds", "secondsInterval": 2}]}})]})
    state = await engine.run(wf)
    item = state.result[0]["json"]
    assert item["Timezone"] == "Asia/Tokyo (UTC+09:00)" and item["timestamp"].endswith("+09:00")
    bad = parse_workflow({"name": "s", "connections": {}, "nodes": [
        node("Schedule", SCHEDULE, {"rule": {"interval": [{"field": "seconds", "secondsInterval": 90}]}}, typeVersion=1.3)]})
    failed = await engine.run(bad)
    assert failed.status == "error" and failed.error.message == "Invalid interval"
    assert failed.error.description == "Seconds must be in range 1-59"


def test_schedule_rules_become_n8ns_cron_expressions() -> None:
    parameters = {"rule": {"interval": [
        {"field": "seconds", "secondsInterval": 5}, {"field": "minutes", "minutesInterval": 10},
        {"field": "hours", "hoursInterval": 2, "triggerAtMinute": 15}, {"field": "days", "triggerAtHour": 9},
        {"field": "weeks", "triggerAtDay": [1, 5], "triggerAtHour": 8}, {"field": "months", "triggerAtDayOfMonth": 3},
        {"field": "cronExpression", "expression": "0 30 9 * * 1-5"}]}}
    made = rules(parameters, 1.2, "Schedule")
    expressions = [r.cron.expression.split(" ", 1) for r in made]
    assert expressions[0] == ["*/5", "* * * * *"]
    assert expressions[1][1] == "*/10 * * * *" and expressions[2][1] == "15 */2 * * *"
    assert expressions[3][1] == "0 9 * * *" and expressions[4][1] == "0 8 * * 1,5" and expressions[5][1] == "0 0 3 */1 *"
    assert made[6].cron.expression == "0 30 9 * * 1-5"
    assert [r.unit for r in made] == [None, None, "hours", None, None, None, None]
    with pytest.raises(NodeOperationError, match="Invalid cron expression"):
        rules({"rule": {"interval": [{"field": "cronExpression", "expression": "61 * * * *"}]}}, 1.2, "Schedule")


def test_cron_next_times() -> None:
    tz = ZoneInfo("Europe/Berlin")
    at = datetime(2026, 12, 1, 10, 0, 7, 500000, tzinfo=tz)
    assert Cron.parse("*/5 * * * * *").next_after(at) == datetime(2026, 12, 1, 10, 0, 10, tzinfo=tz)
    assert Cron.parse("30 9 * * mon-fri").next_after(at) == datetime(2026, 12, 2, 9, 30, tzinfo=tz)
    assert Cron.parse("0 0 1 jan *").next_after(at) == datetime(2027, 1, 1, tzinfo=tz)
    assert Cron.parse("0 12 13 * 5").next_after(at) == datetime(2026, 12, 4, 12, 0, tzinfo=tz)  # day 13 or a Friday
    assert Cron.parse("0 0 * * 7").next_after(at) == datetime(2026, 12, 6, tzinfo=tz)  # 7 is Sunday
    for bad, why in (("* * *", "has 3 fields"), ("60 * * * *", "not a value from 0 to 59"), ("*/0 * * * *", "step"),
                     ("5-2 * * * *", "ends before it starts")):
        with pytest.raises(CronError, match=why):
            Cron.parse(bad)


def test_every_n_hours_fires_when_n_hours_passed_as_n8n_checks() -> None:
    check = RecurrenceCheck()
    rule = Rule(Cron.parse("0 0 */1 * * *"), 3, "hours")
    fired = [hour for hour in range(12) if check.should_fire(0, rule, datetime(2026, 1, 1, hour, tzinfo=timezone.utc))]
    assert fired == [0, 3, 6, 9]
