//! One line a persistent hook process writes: read with a cap, parsed as an
//! answer to one request.

use std::io;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

use crate::protocol::excerpt;
use crate::stdout;

/// The longest answer line read, in bytes. A longer line blocks the calls
/// waiting (the runtime cannot tell whose answer it was) and restarts the
/// process: the cap bounds the memory one answer can take.
pub const PERSISTENT_ANSWER_LIMIT: usize = 1 << 20;

/// What one answer says about its call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The hook output fields (Claude Code's JSON output), `id` removed.
    Output(Map<String, Value>),
    /// `{"id": …, "error": "…"}`: the hook failed on this call.
    Error(String),
    /// An answer for this call that cannot be read as either.
    Ambiguous(String),
}

/// Reads one line (without its `\n`) into `line`, which the caller empties.
pub(crate) enum Line {
    /// A whole line is in the buffer.
    Whole,
    /// The stream ended; `line` holds what came after the last `\n`.
    End,
    /// The line passes `limit` bytes: `line` holds its first `limit` bytes,
    /// and the rest of it is still to be read (see [`skip_line`]).
    TooLong,
}

/// Reads up to the next `\n`, keeping at most `limit` bytes.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Line> {
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(Line::End);
        }
        let (taken, whole) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(at) => (at, true),
            None => (buffer.len(), false),
        };
        let room = limit.saturating_sub(line.len());
        if taken > room {
            line.extend_from_slice(&buffer[..room]);
            reader.consume(room);
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&buffer[..taken]);
        reader.consume(if whole { taken + 1 } else { taken });
        if whole {
            return Ok(Line::Whole);
        }
    }
}

/// Reads and drops the rest of a line, up to and including its `\n`.
pub(crate) async fn skip_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<()> {
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|byte| *byte == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

/// Parses an answer line: a JSON object (no key twice) with a
/// non-negative integer `id`. `Err` says why the line is not an answer at
/// all, which leaves the runtime unable to tell whose it was.
pub(crate) fn parse(line: &[u8]) -> Result<(u64, Answer), String> {
    let shown = || excerpt(&String::from_utf8_lossy(line), 200);
    let text = std::str::from_utf8(line)
        .map_err(|_| format!("wrote a line that is not UTF-8: {}", shown()))?;
    let value = stdout::parse_json(text.trim_end_matches('\r')).map_err(|error| {
        format!(
            "wrote a line that is not a JSON answer ({error}): {}",
            shown()
        )
    })?;
    let Value::Object(mut answer) = value else {
        return Err(format!(
            "wrote a line that is not a JSON object: {}",
            shown()
        ));
    };
    let id = match answer.remove("id") {
        Some(Value::Number(id)) if id.as_u64().is_some() => id.as_u64().unwrap_or_default(),
        Some(other) => {
            return Err(format!(
                "wrote an answer whose `id` is {other}, not the request's id (a whole number): {}",
                shown()
            ));
        }
        None => {
            return Err(format!(
                "wrote an answer without an `id`, so no call can be told it: {}",
                shown()
            ));
        }
    };
    let answer = match answer.remove("error") {
        None => Answer::Output(answer),
        Some(Value::String(message)) if answer.is_empty() => Answer::Error(message),
        Some(Value::String(_)) => Answer::Ambiguous(
            "the answer holds both `error` and other fields; give one or the other".into(),
        ),
        Some(other) => Answer::Ambiguous(format!(
            "the answer's `error` is {other}, not a message (a string)"
        )),
    };
    Ok((id, answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_carry_an_id_and_output_or_an_error() {
        let (id, answer) = parse(br#"{"id": 7, "decision": "block", "reason": "no"}"#).unwrap();
        assert_eq!(id, 7);
        let Answer::Output(fields) = answer else {
            panic!("{answer:?}")
        };
        assert_eq!(
            Value::Object(fields),
            json!({"decision": "block", "reason": "no"})
        );
        assert_eq!(
            parse(b"{\"id\": 1, \"error\": \"KeyError: 'x'\"}\r").unwrap(),
            (1, Answer::Error("KeyError: 'x'".into()))
        );
        assert!(matches!(
            parse(br#"{"id": 1, "error": "x", "decision": "block"}"#)
                .unwrap()
                .1,
            Answer::Ambiguous(_)
        ));
        assert!(matches!(
            parse(br#"{"id": 1, "error": 3}"#).unwrap().1,
            Answer::Ambiguous(_)
        ));
    }

    #[test]
    fn lines_that_are_no_answer_are_refused() {
        for line in [
            &b"hello"[..],
            b"",
            b"[1]",
            br#"{"decision": "block"}"#,
            br#"{"id": -1}"#,
            br#"{"id": 1.5}"#,
            br#"{"id": "1"}"#,
            br#"{"id": 1, "id": 2}"#,
            br#"{"id": 1, "reason": "a", "reason": "b"}"#,
            b"{\"id\": 1, \"reason\": \"\xff\"}",
            br#"{"id": 1} {"id": 2}"#,
        ] {
            assert!(parse(line).is_err(), "{}", String::from_utf8_lossy(line));
        }
    }

    #[tokio::test]
    async fn lines_are_read_whole_up_to_the_cap() {
        let input = b"{\"id\":1}\nabcdefghij\nxyz".to_vec();
        let mut reader = tokio::io::BufReader::with_capacity(4, &input[..]);
        let mut line = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::Whole
        ));
        assert_eq!(line, b"{\"id\":1}");
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::TooLong
        ));
        assert_eq!(line, b"abcdefghi");
        skip_line(&mut reader).await.unwrap();
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::End
        ));
        assert_eq!(line, b"xyz");
        let mut reader = tokio::io::BufReader::with_capacity(4, &b"xyz"[..]);
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line, 9).await.unwrap(),
            Line::End
        ));
        assert_eq!(line, b"xyz");
    }
}
