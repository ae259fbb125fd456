/*
 * schemas/jsonschema.c - generate the JSON Schema (draft 2020-12) of
 * rec-dump's JSON and NDJSON output from schemas/events.json, so that the
 * contract of man/rec-dump.1 is machine-checkable and never drifts from the
 * event definitions.
 *
 * The rendering rules it encodes are tools/dump-render.c's: an event is an
 * object {"type": NAME, "startTime": ns since the epoch, then its fields};
 * a reference to a pool type made of one string field (String) is that
 * string; other references are objects of their fields; nullable fields
 * may be null; ticks fields are ns since the epoch. The schema accepts one
 * event (an NDJSON line) or an array of events (--json). Events of types
 * this schema does not know (a newer recording) only need "type" and
 * "startTime".
 *
 * Usage: jsonschema SCHEMA.json OUT.json
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static json_t *find_type(json_t *types, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t)
        if (strcmp(str(t, "name"), name) == 0)
            return t;
    return NULL;
}

/* A pool type rendered as its only field, a string. */
static bool as_string(json_t *t)
{
    json_t *f = json_object_get(t, "fields");
    return json_array_size(f) == 1
        && strcmp(str(json_array_get(f, 0), "type"), "string") == 0;
}

static json_t *value_schema(json_t *types, json_t *field)
{
    const char *ty = str(field, "type");
    json_t *s;
    if (!strcmp(ty, "uint") || !strcmp(ty, "ticks"))
        s = json_pack("{s:s, s:i}", "type", "integer", "minimum", 0);
    else if (!strcmp(ty, "int"))
        s = json_pack("{s:s}", "type", "integer");
    else if (!strcmp(ty, "boolean"))
        s = json_pack("{s:s}", "type", "boolean");
    else if (!strcmp(ty, "string"))
        s = json_pack("{s:s}", "type", "string");
    else if (find_type(types, ty) && as_string(find_type(types, ty)))
        s = json_pack("{s:s}", "type", "string");
    else {
        char ref[256];
        snprintf(ref, sizeof ref, "#/$defs/%s", ty);
        s = json_pack("{s:s}", "$ref", ref);
    }
    if (json_is_true(json_object_get(field, "array")))
        s = json_pack("{s:s, s:o}", "type", "array", "items", s);
    if (json_is_true(json_object_get(field, "nullable")))
        s = json_pack("{s:[o, {s:s}]}", "anyOf", s, "type", "null");
    return s;
}

static json_t *type_schema(json_t *types, json_t *t, bool event)
{
    json_t *props = json_object(), *req = json_array();
    if (event) {
        json_object_set_new(props, "type", json_pack("{s:s}", "const",
                                                     str(t, "name")));
        json_array_append_new(req, json_string("type"));
    }
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(t, "fields"), i, f) {
        json_t *s = value_schema(types, f);
        char desc[2048];
        const char *unit = str(f, "unit");
        snprintf(desc, sizeof desc, "%s%s%s%s", str(f, "description"),
                 *unit ? " Unit: " : "", unit,
                 !strcmp(str(f, "type"), "ticks") ? " (ns since the epoch)"
                                                  : "");
        json_object_set_new(s, "title", json_string(str(f, "label")));
        json_object_set_new(s, "description", json_string(desc));
        json_object_set_new(props, str(f, "name"), s);
        /* Nullable fields may also be absent (recordings written before
         * such a field was added, e.g. ProcessInfo.runId, print without
         * it), and so may "optional" ones: appended to a type that
         * recordings already held. */
        if (!json_is_true(json_object_get(f, "nullable")) &&
            !json_is_true(json_object_get(f, "optional")))
            json_array_append_new(req, json_string(str(f, "name")));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:b}",
                     "title", str(t, "label"),
                     "description", str(t, "description"),
                     "type", "object", "properties", props, "required", req,
                     "additionalProperties", 0);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: jsonschema SCHEMA.json OUT.json\n");
        return 2;
    }
    json_error_t err;
    json_t *root = json_load_file(argv[1], JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        fprintf(stderr, "jsonschema: %s:%d: %s\n", argv[1], err.line, err.text);
        return 1;
    }
    json_t *types = json_object_get(root, "types");
    json_t *defs = json_object(), *events = json_array(), *known = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t) {
        bool event = strcmp(str(t, "kind"), "event") == 0;
        if (!event && as_string(t))
            continue;
        json_object_set_new(defs, str(t, "name"), type_schema(types, t, event));
        if (event) {
            char ref[256];
            snprintf(ref, sizeof ref, "#/$defs/%s", str(t, "name"));
            json_array_append_new(events, json_pack("{s:s}", "$ref", ref));
            json_array_append_new(known, json_string(str(t, "name")));
        }
    }
    json_array_append_new(events, json_pack(
        "{s:s, s:s, s:{s:{s:s, s:{s:o}}, s:{s:s, s:i}}, s:[s, s]}",
        "description", "An event of a type this schema does not describe "
                       "(a recording made by a newer version).",
        "type", "object",
        "properties", "type", "type", "string", "not", "enum", known,
        "startTime", "type", "integer", "minimum", 0,
        "required", "type", "startTime"));
    json_object_set_new(defs, "event", json_pack("{s:o}", "anyOf", events));
    char version[32];
    snprintf(version, sizeof version, "%lld",
             (long long)json_integer_value(json_object_get(root, "version")));
    json_t *out = json_pack(
        "{s:s, s:s, s:s, s:s, s:[{s:s}, {s:s, s:{s:s}}], s:o}",
        "$schema", "https://json-schema.org/draft/2020-12/schema",
        "$id", "urn:rec:rec-dump:events-schema-version-1",
        "title", "rec-dump JSON and NDJSON output",
        "description", "Generated from schemas/events.json. One event (a "
                       "line of rec-dump --ndjson) or an array of events "
                       "(rec-dump --json).",
        "oneOf", "$ref", "#/$defs/event", "type", "array", "items", "$ref",
        "#/$defs/event",
        "$defs", defs);
    json_object_set_new(out, "x-rec-schema-version", json_string(version));
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    if (json_dump_file(out, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0
        || rename(tmp, argv[2]) != 0) {
        fprintf(stderr, "jsonschema: cannot write %s: %s\n", argv[2],
                strerror(errno));
        return 1;
    }
    json_decref(out);
    json_decref(root);
    return 0;
}
