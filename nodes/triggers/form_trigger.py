"""n8n Form Trigger: starts a workflow with a submitted form, as n8n's node (v1–v2.3).

`mini-n8n serve` shows the form at `GET /form/<path>` (a plain HTML page) and takes its
submission at `POST /form/<path>` (fields `field-0`, `field-1`, ... as n8n's page posts them);
`form_item` makes n8n's output item: each field's value under its label, `submittedAt`,
`formMode`, and `formQueryParameters` when the page's URL had a query. A run from the editor or
`mini-n8n run --trigger NAME --input JSON` starts with the item given or pinned.
"""

import html
import json
import math
from datetime import datetime, timezone as dt_timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import ConfigDict, Field

from engine.connection_types import MAIN, PortSpec
from engine.context import NodeContext
from engine.node_type import NodeParams, NodeType
from engine.requests import EngineResponse
from engine.run_data import Item

FIELD_TYPES = ("checkbox", "html", "date", "dropdown", "email", "file", "hiddenField", "number", "password", "radio",
               "text", "textarea")
SUBMITTED_TEXT = "Your response has been recorded"  # n8n's default text after a submission


class FormParams(NodeParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    formTitle: str = Field("", title="Form Title")
    formDescription: str = Field("", title="Form Description", json_schema_extra={"multiline": True})
    responseMode: Literal["onReceived", "lastNode"] = Field("onReceived", title="Respond When")


def form_path(parameters: dict[str, Any], webhook_id: str | None) -> str:
    """The form's path under /form/: n8n's `path || options.path || webhookId`, slashes trimmed."""
    options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
    path = str(parameters.get("path") or options.get("path") or webhook_id or "").strip("/")
    return path


def fields_of(parameters: dict[str, Any]) -> list[dict[str, Any]]:
    collection = parameters.get("formFields")
    values = collection.get("values") if isinstance(collection, dict) else None
    return [f for f in values if isinstance(f, dict)] if isinstance(values, list) else []


def refused(parameters: dict[str, Any], version: float) -> list[str]:
    """What of this form mini-n8n does not do, each naming the setting."""
    out: list[str] = []
    if parameters.get("authentication", "none") != "none":
        out.append(f'authentication "{parameters["authentication"]}" is not supported')
    mode = parameters.get("responseMode", "onReceived")
    if mode not in ("onReceived", "lastNode"):
        out.append(f'response mode "{mode}" is not supported')
    for index, field in enumerate(fields_of(parameters)):
        kind = field.get("fieldType", "text")
        if kind == "file":
            out.append(f'field {index + 1} ("{field.get("fieldLabel", "")}") is a file upload, which is not supported')
        elif kind not in FIELD_TYPES:
            out.append(f'field {index + 1} has the type "{kind}", which n8n does not have')
        if kind == "date" and field.get("formatDate"):
            out.append(f'field {index + 1} ("{field.get("fieldLabel", "")}"): "formatDate" is not supported')
    return out


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _number(value: str) -> float | int | None:
    text = value.strip()
    try:
        number = float(text) if text else 0.0
    except ValueError:
        return None  # NaN: null in JSON
    if math.isinf(number) or math.isnan(number):
        return None
    return int(number) if number.is_integer() else number


def form_item(parameters: dict[str, Any], version: float, values: dict[str, list[str]], query: dict[str, Any],
              mode: str, timezone: str, now: datetime | None = None) -> Item:
    """n8n's prepareFormReturnItem for a submission: `values` are the posted `field-N` entries."""
    out: dict[str, Any] = {}
    for index, field in enumerate(fields_of(parameters)):
        name = field.get("fieldLabel", field.get("fieldName"))
        kind = field.get("fieldType", "text")
        posted = values.get(f"field-{index}")
        if not posted:
            out[name] = None
            continue
        value: Any = posted[0]
        if kind == "html":
            if field.get("elementName"):
                out[field["elementName"]] = value
            continue
        if kind == "number":
            value = _number(value)
        elif kind == "text":
            value = value.strip()
        if field.get("multiselect") or kind in ("checkbox", "radio"):
            value = _json_or_text(value) if len(posted) == 1 else list(posted)
            if kind == "checkbox" and isinstance(value, str):
                value = [value]
            if kind == "radio" and isinstance(value, list):
                value = value[0] if value else None
        out[name] = value
    options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
    use_zone = options.get("useWorkflowTimezone")
    if use_zone is None and version > 2:
        use_zone = True
    zone_name = timezone if use_zone else "UTC"
    moment = (now or datetime.now(dt_timezone.utc)).astimezone(ZoneInfo(zone_name))
    offset = moment.utcoffset().total_seconds() // 60  # type: ignore[union-attr]
    sign = "+" if offset >= 0 else "-"
    zone_text = f"{sign}{int(abs(offset)) // 60:02d}:{int(abs(offset)) % 60:02d}"
    if zone_name.lower() in ("utc", "gmt"):  # luxon writes its fixed UTC zone as "Z"
        zone_text = "Z"
    out["submittedAt"] = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}{zone_text}"
    out["formMode"] = mode
    if query:
        out["formQueryParameters"] = query
    return {"json": out}


def render_form(parameters: dict[str, Any], query_string: str = "") -> str:
    """A plain HTML page with the form's title, description and fields; it posts the fields as
    n8n's form page does (multipart `field-N`) and shows the answer's text when accepted."""
    title = html.escape(str(parameters.get("formTitle") or ""))
    description = html.escape(str(parameters.get("formDescription") or "")).replace("\\n", "<br>").replace("\n", "<br>")
    options = parameters.get("options") if isinstance(parameters.get("options"), dict) else {}
    button = html.escape(str(options.get("buttonLabel") or "Submit"))
    submitted = options.get("formSubmittedText")
    respond = (options.get("respondWithOptions") or {}).get("values") if isinstance(options.get("respondWithOptions"), dict) else None
    if isinstance(respond, dict) and respond.get("respondWith", "text") == "text":
        submitted = respond.get("formSubmittedText", submitted)
    submitted = html.escape(str(submitted or SUBMITTED_TEXT))
    rows: list[str] = []
    for index, field in enumerate(fields_of(parameters)):
        name = f"field-{index}"
        kind = field.get("fieldType", "text")
        label = html.escape(str(field.get("fieldLabel", "")))
        required = " required" if field.get("requiredField") and kind not in ("checkbox",) else ""
        placeholder = f' placeholder="{html.escape(str(field["placeholder"]))}"' if field.get("placeholder") else ""
        choices = [str(o.get("option", "")) for o in ((field.get("fieldOptions") or {}).get("values") or []) if isinstance(o, dict)]
        if kind == "hiddenField":
            rows.append(f'<input type="hidden" name="{name}" value="{html.escape(str(field.get("fieldValue", "")))}">')
        elif kind == "html":
            rows.append(f'<div>{field.get("html", "")}</div>')
        elif kind == "textarea":
            rows.append(f'<label>{label}<textarea name="{name}"{placeholder}{required}></textarea></label>')
        elif kind == "dropdown":
            multiple = " multiple" if field.get("multiselect") else ""
            opts = "".join(f'<option value="{html.escape(c)}">{html.escape(c)}</option>' for c in choices)
            rows.append(f'<label>{label}<select name="{name}"{multiple}{required}>{opts}</select></label>')
        elif kind in ("checkbox", "radio"):
            boxes = "".join(f'<label><input type="{kind}" name="{name}" value="{html.escape(c)}">{html.escape(c)}</label>'
                            for c in choices)
            rows.append(f"<fieldset><legend>{label}</legend>{boxes}</fieldset>")
        else:
            kind_attr = kind if kind in ("date", "email", "number", "password", "file") else "text"
            rows.append(f'<label>{label}<input type="{kind_attr}" name="{name}"{placeholder}{required}></label>')
    action = html.escape("?" + query_string if query_string else "")
    body = "\n".join(rows)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>body{{font-family:sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}}label,fieldset{{display:block;margin:1rem 0}}
input:not([type=checkbox]):not([type=radio]),select,textarea{{display:block;width:100%;box-sizing:border-box;padding:.4rem}}</style>
</head><body>
<h1>{title}</h1><p>{description}</p>
<form id="form" method="post" enctype="multipart/form-data" action="{action}">
{body}
<button type="submit">{button}</button>
</form>
<p id="done" hidden>{submitted}</p>
<script>
document.getElementById('form').addEventListener('submit', async (event) => {{
  event.preventDefault();
  const reply = await fetch(event.target.action || location.href, {{method: 'POST', body: new FormData(event.target)}});
  if (reply.ok) {{ event.target.hidden = true; document.getElementById('done').hidden = false; }}
  else {{ alert((await reply.text()) || reply.statusText); }}
}});
</script>
</body></html>
"""


class FormTrigger(NodeType):
    type = "n8n-nodes-base.formTrigger"
    version = 2.3
    versions = (1, 2, 2.1, 2.2, 2.3)
    display_name = "n8n Form Trigger"
    default_name = "On form submission"
    description = "Starts the workflow when a form is submitted (served by `mini-n8n serve` at /form/<path>)"
    group = "Triggers"
    icon = "form"
    inputs = ()
    outputs = (PortSpec(MAIN),)
    is_trigger = True
    Params = FormParams
    starts_with_request = True
    implemented_parameters = frozenset({
        "path", "formTitle", "formDescription", "formFields", "responseMode", "authentication", "options",
        "options.path", "options.buttonLabel", "options.respondWithOptions", "options.useWorkflowTimezone",
        "options.formSubmittedText",
    })
    unsupported_parameters = {
        "options.appendAttribution": "the served form is a plain page without n8n's attribution",
        "options.customCss": "the served form is a plain page: custom CSS is not applied",
        "options.ignoreBots": "ignoring bots is not supported",
    }

    async def execute(self, ctx: NodeContext, response: EngineResponse | None = None) -> list[list[Item]]:
        for reason in refused(ctx.node.parameters, float(ctx.node.typeVersion)):
            ctx.note(f'Form Trigger "{ctx.node.name}": {reason} (mini-n8n serve refuses to serve it)')
        return [[{**item, "json": dict(item.get("json", {}))} for item in ctx.items]]
