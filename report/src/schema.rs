//! A checker for the subset of JSON Schema (draft 2020-12) the project's
//! schemas use: `type`, `enum`, `required`, `properties`,
//! `additionalProperties` (false or a schema), `items`, `minimum` and
//! `$ref` to `#/$defs/...`. Enough to test that what the cooker writes is
//! what the schemas promise, without a schema-engine dependency.

use serde_json::Value;

/// Every place where `value` breaks `schema`, as `path: problem` lines;
/// empty when it conforms.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, value, "$", &mut errors);
    errors
}

fn check(schema: &Value, root: &Value, v: &Value, path: &str, errs: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        match root.get("$defs").and_then(|d| d.get(name)) {
            Some(s) => check(s, root, v, path, errs),
            None => errs.push(format!("{path}: unresolved $ref {r}")),
        }
        return;
    }
    if !type_matches(schema, v) {
        errs.push(format!("{path}: expected {}, got {v}", schema["type"]));
        return;
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errs.push(format!("{path}: {v} not in {e:?}"));
        }
    }
    if let (Some(min), Some(x)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if x < min {
            errs.push(format!("{path}: {x} below the minimum {min}"));
        }
    }
    if let Some(o) = v.as_object() {
        check_object(schema, root, o, path, errs);
    }
    if let (Some(a), Some(items)) = (v.as_array(), schema.get("items")) {
        for (i, x) in a.iter().enumerate() {
            check(items, root, x, &format!("{path}[{i}]"), errs);
        }
    }
}

fn type_matches(schema: &Value, v: &Value) -> bool {
    let types: Vec<&str> = match schema.get("type") {
        None => return true,
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        Some(_) => return false,
    };
    types.iter().any(|t| match *t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_u64() || v.is_i64(),
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        _ => false,
    })
}

fn check_object(
    schema: &Value,
    root: &Value,
    o: &serde_json::Map<String, Value>,
    path: &str,
    errs: &mut Vec<String>,
) {
    let required = schema.get("required").and_then(Value::as_array);
    for k in required.into_iter().flatten().filter_map(Value::as_str) {
        if !o.contains_key(k) {
            errs.push(format!("{path}: missing required '{k}'"));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let extra = schema.get("additionalProperties");
    for (k, val) in o {
        let at = format!("{path}.{k}");
        match (props.and_then(|p| p.get(k)), extra) {
            (Some(s), _) => check(s, root, val, &at, errs),
            (None, Some(Value::Bool(false))) => {
                errs.push(format!("{path}: property '{k}' not in the schema"))
            }
            (None, Some(s @ Value::Object(_))) => check(s, root, val, &at, errs),
            (None, _) => {}
        }
    }
}
