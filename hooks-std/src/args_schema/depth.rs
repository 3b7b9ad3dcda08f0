//! The nesting check that runs before the validator.
//!
//! The validator descends into arguments by recursion, as far as a recursive
//! schema (`"items": {"$ref": "#"}`) lets it, and so does formatting a value
//! into an error message. Arguments built in process are not limited by a
//! parser's depth limit, so a hostile 100,000-deep array would overflow the
//! stack — an abort no panic guard can catch. This walk keeps one iterator
//! per open container on the heap, so it cannot overflow, its memory is
//! bounded by `max_depth`, and it runs first.

use serde_json::Value;

/// Whether `value` nests arrays and objects more than `max_depth` levels
/// deep. A scalar has depth 0, `[1]` and `{"a": 1}` depth 1, `{"a": [1]}`
/// depth 2. Stops at the first container that is too deep.
pub(crate) fn exceeds_depth(value: &Value, max_depth: usize) -> bool {
    let mut open: Vec<Children<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(children) = next.and_then(Children::of) {
            open.push(children);
            if open.len() > max_depth {
                return true;
            }
        }
        let Some(innermost) = open.last_mut() else {
            return false;
        };
        next = innermost.next();
        if next.is_none() {
            open.pop();
        }
    }
}

/// The values directly inside one array or object.
enum Children<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(serde_json::map::Values<'a>),
}

impl<'a> Children<'a> {
    /// The children of `value`, or `None` for a scalar.
    fn of(value: &'a Value) -> Option<Self> {
        match value {
            Value::Array(items) => Some(Children::Array(items.iter())),
            Value::Object(fields) => Some(Children::Object(fields.values())),
            _ => None,
        }
    }
}

impl<'a> Iterator for Children<'a> {
    type Item = &'a Value;

    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Children::Array(items) => items.next(),
            Children::Object(fields) => fields.next(),
        }
    }
}
