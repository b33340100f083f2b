use super::*;

/// Each body's error message, exactly (these are the messages of the tree-of-values reader
/// this one replaced), and a 400.
fn assert_errors(cases: &[(&str, &str)]) {
    for &(body, want) in cases {
        let got = parse_symbolicate_request(body.as_bytes())
            .map(|_| ())
            .unwrap_err();
        assert_eq!(got.message, want, "{body}");
        assert_eq!(got.status(), 400);
    }
}

/// The body, then `jobs`, then each job's `memoryMap` and `stacks` are there and of their
/// kind before anything inside them is read.
#[test]
fn the_request_and_its_jobs_are_checked_first() {
    assert_errors(&[
        (
            r#"{not json"#,
            r#"invalid JSON: key must be a string at line 1 column 2"#,
        ),
        (r#"[1]"#, r#"the request must be a JSON object"#),
        (r#""x""#, r#"the request must be a JSON object"#),
        (r#"3"#, r#"the request must be a JSON object"#),
        (r#"null"#, r#"the request must be a JSON object"#),
        (r#"{"jobs": null}"#, r#"'jobs' must be an array"#),
        (r#"{"jobs": 3}"#, r#"'jobs' must be an array"#),
        (r#"{"jobs": {}}"#, r#"'jobs' must be an array"#),
        (r#"{"jobs": [3]}"#, r#"jobs[0]: a job must be an object"#),
        (
            r#"{"jobs": [{"stacks": []}, 4]}"#,
            r#"jobs[0]: missing 'memoryMap'"#,
        ),
        (
            r#"{"jobs": [{"memoryMap": [], "stacks": []}, 4]}"#,
            r#"jobs[1]: a job must be an object"#,
        ),
        (
            r#"{"jobs": [{"memoryMap": [], "stacks": []}, {"memoryMap": 1, "stacks": []}]}"#,
            r#"jobs[1].memoryMap: must be an array"#,
        ),
        (r#"{"stacks": []}"#, r#"request: missing 'memoryMap'"#),
        (
            r#"{"memoryMap": 5, "stacks": []}"#,
            r#"request.memoryMap: must be an array"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]]}"#,
            r#"request: missing 'stacks'"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": {}}"#,
            r#"request.stacks: must be an array"#,
        ),
    ]);
}

/// Each `memoryMap` entry is `[debugName, breakpadId]`, nothing else.
#[test]
fn memory_map_entries_are_two_strings() {
    assert_errors(&[
        (
            r#"{"memoryMap": [["a","B0","x"]], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [["a"]], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [["a", 1]], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [[1, "B0"]], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": ["a"], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [{"a": "b"}], "stacks": []}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"], null], "stacks": []}"#,
            r#"request.memoryMap[1]: must be [debugName, breakpadId] (two strings)"#,
        ),
    ]);
}

/// Each frame is `[moduleIndex, moduleOffset]`: an index into the `memoryMap` (or
/// negative) and a non-negative integer.
#[test]
fn frames_are_an_index_and_an_offset() {
    assert_errors(&[
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [3]}"#,
            r#"request.stacks[0]: must be an array of frames"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[3]]}"#,
            r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0]]]}"#,
            r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 2, 3]]]}"#,
            r#"request.stacks[0][0]: must be [moduleIndex, moduleOffset]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[1, 2]]]}"#,
            r#"request.stacks[0][0]: moduleIndex 1 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[-2, 2]]]}"#,
            r#"request.stacks[0][0]: moduleIndex -2 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, -2]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got -2"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 2.5]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 2.5"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, -0]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got -0.0"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1e3]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 1000.0"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "0x2"]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "0x2""#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, null]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got null"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, true]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got true"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, [1, {"k": "v"}]]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got [1,{"k":"v"}]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, {"k": [1,2.0,"\u00e9"]}]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got {"k":[1,2.0,"é"]}"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 18446744073709551616]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got 1.8446744073709552e+19"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[9223372036854775808, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex must be an integer"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[9223372036854775807, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex 9223372036854775807 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[-9223372036854775808, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex -9223372036854775808 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[["0", 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex must be an integer"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0.0, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex must be an integer"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[null, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex must be an integer"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[1, "x"]]]}"#,
            r#"request.stacks[0][0]: moduleIndex 1 is past the memoryMap (1 entries)"#,
        ),
    ]);
}

/// Where several fields are wrong, the first in the order the rules apply is named; a key
/// given twice counts as its last value, and `jobs` wins over a job's own fields.
#[test]
fn the_first_wrong_field_in_the_rules_order_is_named() {
    assert_errors(&[
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1], [0, 2]], [[0, 3], [5, "x"]]]}"#,
            r#"request.stacks[1][1]: moduleIndex 5 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1], [7, 2]], [[0, "y"]]]}"#,
            r#"request.stacks[0][1]: moduleIndex 7 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "y"]], [[7, 2]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "y""#,
        ),
        (
            r#"{"stacks": [[[0, "x"]]], "memoryMap": [["a","B0"]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "x""#,
        ),
        (
            r#"{"stacks": [[[3, 1]]], "memoryMap": [["a","B0"]]}"#,
            r#"request.stacks[0][0]: moduleIndex 3 is past the memoryMap (1 entries)"#,
        ),
        (
            r#"{"stacks": [[[0, "x"]]]}"#,
            r#"request: missing 'memoryMap'"#,
        ),
        (
            r#"{"stacks": [[[0, 1]]], "memoryMap": 3}"#,
            r#"request.memoryMap: must be an array"#,
        ),
        (
            r#"{"stacks": 3, "memoryMap": [["a",1]]}"#,
            r#"request.memoryMap[0]: must be [debugName, breakpadId] (two strings)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "stacks": [[[0, "z"]]]}"#,
            r#"request.stacks[0][0]: moduleOffset must be a non-negative integer, got "z""#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "memoryMap": []}"#,
            r#"request.stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
        ),
        (
            r#"{"memoryMap": [], "stacks": [[[0, 1]]]}"#,
            r#"request.stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "jobs": 3}"#,
            r#"'jobs' must be an array"#,
        ),
        (
            r#"{"jobs": [{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "jobs": 3}], "jobs": [{"memoryMap": [], "stacks": [[[0, 1]]]}]}"#,
            r#"jobs[0].stacks[0][0]: moduleIndex 0 is past the memoryMap (0 entries)"#,
        ),
        (
            r#"{"jobs": [{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]]}], "jobs": null}"#,
            r#"'jobs' must be an array"#,
        ),
    ]);
}

/// Text that is not JSON gets the parser's message, also inside fields that are skipped.
#[test]
fn invalid_json_is_the_parsers_message() {
    assert_errors(&[
        (
            r#"{"memoryMap": [], "stacks": []} x"#,
            r#"invalid JSON: trailing characters at line 1 column 33"#,
        ),
        (
            r#"{"memoryMap": [["a","\ud800"]], "stacks": []}"#,
            r#"invalid JSON: unexpected end of hex escape at line 1 column 28"#,
        ),
        (
            r#"{"memoryMap": [{"x": "\ud800"}], "stacks": []}"#,
            r#"invalid JSON: unexpected end of hex escape at line 1 column 29"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "\ud800"]]]}"#,
            r#"invalid JSON: unexpected end of hex escape at line 1 column 52"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]]"#,
            r#"invalid JSON: EOF while parsing an object at line 1 column 48"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1"#,
            r#"invalid JSON: EOF while parsing a list at line 1 column 45"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]],}"#,
            r#"invalid JSON: trailing comma at line 1 column 50"#,
        ),
        (
            // A field that is not read is skipped, not parsed: the parser says this
            // where the tree's reader said "trailing comma".
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "x"]]], "more": [1,]}"#,
            r#"invalid JSON: expected value at line 1 column 64"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 01]]]}"#,
            r#"invalid JSON: invalid number at line 1 column 46"#,
        ),
    ]);
}

/// Nesting past the parser's limit in a wrong offset: the parser's own error.
#[test]
fn nesting_past_the_limit_is_the_parsers_error() {
    let deep = format!(
        r#"{{"memoryMap": [["a","B0"]], "stacks": [[[0, {}{}]]]}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let got = parse_symbolicate_request(deep.as_bytes())
        .map(|_| ())
        .unwrap_err();
    assert!(
        got.message
            .starts_with("invalid JSON: recursion limit exceeded"),
        "{}",
        got.message
    );
}

#[test]
fn requests_read_into_jobs() {
    let cases = [
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 18446744073709551615]]]}"#,
            r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 18446744073709551615)]] }]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, "z"]]], "stacks": [[[0, 1]]]}"#,
            r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 1)]] }]"#,
        ),
        (
            r#"{"memoryMap": [], "stacks": [[[-1, 1]]]}"#,
            r#"[Job { memory_map: [], keys: [], stacks: [[(None, 1)]] }]"#,
        ),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 1]]], "x": "\ud800"}"#,
            r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 1)]] }]"#,
        ),
        (r#"{"memoryMap": 3, "stacks": 4, "jobs": []}"#, r#"[]"#),
        (
            r#"{"memoryMap": [["a","B0"]], "stacks": [[[0, 5], [-1, 7]], []]}"#,
            r#"[Job { memory_map: [("a", DebugId("B0"))], keys: ["a/B0"], stacks: [[(Some(0), 5), (None, 7)], []] }]"#,
        ),
        (
            r#"{"jobs": [{"memoryMap": [["a","B0"],["b","C1"]], "stacks": [[[1, 2]]], "x": {}}]}"#,
            r#"[Job { memory_map: [("a", DebugId("B0")), ("b", DebugId("C1"))], keys: ["a/B0", "b/C1"], stacks: [[(Some(1), 2)]] }]"#,
        ),
        (
            r#"{"stacks": [[[0, 1]]], "memoryMap": [["a","B0"]], "memoryMap": [["b","C0"]]}"#,
            r#"[Job { memory_map: [("b", DebugId("C0"))], keys: ["b/C0"], stacks: [[(Some(0), 1)]] }]"#,
        ),
        (r#"{"jobs": []}"#, "[]"),
    ];
    for (body, want) in cases {
        let jobs = parse_symbolicate_request(body.as_bytes()).expect(body);
        assert_eq!(format!("{jobs:?}"), want, "{body}");
    }
}
