//! A small JSON reader and writer: the scenario files and the trace export.
//!
//! [`parse`] reads strict RFC 8259 JSON into a [`Value`]; [`to_string`] and [`to_string_pretty`]
//! write a value back out. Objects keep their keys in the order they were read or built, so a
//! written document lists its keys in a chosen order.
//!
//! Numbers: a whole number without a fraction or exponent that fits an `i64` is read as
//! [`Value::Integer`], and written without a fractional part; every other number is read as
//! [`Value::Number`], converted to the nearest `f64` by `str::parse`, and written with the
//! fewest digits that read back to the same `f64` (always with a `.` or an exponent, such as
//! `1.0`, `0.25`, `1e-7` or `1.5e+16`). JSON has no infinities or NaN: a number that is not
//! finite is written as `null`, and a number too large for an `f64` is an error when read.

use std::fmt;
use std::ops::Index;

/// The deepest nesting of arrays and objects [`parse`] accepts, so that hostile input cannot
/// exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// A JSON value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number written without a fraction or exponent, such as a count or an index.
    Integer(i64),
    /// Any other number. A value that is not finite is written as `null`.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, its members in order. [`parse`] keeps repeated keys; [`Value::get`] finds the
    /// first.
    Object(Vec<(String, Value)>),
}

static NULL: Value = Value::Null;

impl Value {
    /// The member called `key`, if this is an object that has one.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The number, as an `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Integer(i) => Some(*i as f64),
            Self::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The whole number, if this is a [`Value::Integer`].
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The text, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members in order, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Self::Object(members) => Some(members),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// Whether this is a number, whole or not.
    pub fn is_number(&self) -> bool {
        matches!(self, Self::Integer(_) | Self::Number(_))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Self::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Self::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Self::Object(_))
    }

    /// An object from its members, in order.
    pub fn object<K: Into<String>>(members: impl IntoIterator<Item = (K, Value)>) -> Self {
        Self::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

/// `value["key"]`: the member, or `null` when there is none or this is not an object.
impl Index<&str> for Value {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

/// `value[i]`: the element, or `null` when there is none or this is not an array.
impl Index<usize> for Value {
    type Output = Value;

    fn index(&self, i: usize) -> &Value {
        self.as_array()
            .and_then(|items| items.get(i))
            .unwrap_or(&NULL)
    }
}

/// Compact JSON, the same text as [`to_string`].
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_string(self))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Self::Number(n)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Self {
        Self::Integer(i.into())
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Self {
        Self::Integer(i.into())
    }
}

/// A whole number; one too large for an `i64` becomes the nearest [`Value::Number`].
impl From<usize> for Value {
    fn from(i: usize) -> Self {
        i64::try_from(i).map_or(Self::Number(i as f64), Self::Integer)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

/// `Some` as its value, `None` as `null`.
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Self {
        Self::Array(items.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(items: &[T]) -> Self {
        Self::Array(items.iter().cloned().map(Into::into).collect())
    }
}

impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        Self::Array(items.into_iter().map(Into::into).collect())
    }
}

/// `value == 0.5`: true for a number of that value.
impl PartialEq<f64> for Value {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

/// `value == 4`: true for a whole number of that value.
impl PartialEq<i64> for Value {
    fn eq(&self, other: &i64) -> bool {
        match self {
            Self::Integer(i) => i == other,
            Self::Number(n) => *n == *other as f64 && n.fract() == 0.0,
            _ => false,
        }
    }
}

/// `value == 4`: true for a whole number of that value.
impl PartialEq<i32> for Value {
    fn eq(&self, other: &i32) -> bool {
        *self == i64::from(*other)
    }
}

/// `value == n`: true for a whole number of that value.
impl PartialEq<usize> for Value {
    fn eq(&self, other: &usize) -> bool {
        i64::try_from(*other).is_ok_and(|i| *self == i)
    }
}

/// `value == true`: true for that boolean.
impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

/// `value == "text"`: true for a string with that text.
impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

/// `value == "text"`: true for a string with that text.
impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Why a text is not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// What is wrong, such as "expected `,` or `]`".
    pub message: String,
    /// The line of the problem, from 1.
    pub line: usize,
    /// The character in that line, from 1.
    pub column: usize,
}

/// For example "expected `,` or `]` at line 3, column 7".
impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for JsonError {}

/// Reads one JSON value, with optional whitespace around it and nothing else.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut parser = Parser { text, pos: 0 };
    parser.skip_whitespace();
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.pos < text.len() {
        return Err(parser.error("unexpected text after the JSON value"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    /// A byte offset into `text`, always at a character boundary.
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// An error at the current position.
    fn error(&self, message: &str) -> JsonError {
        self.error_at(self.pos, message.to_string())
    }

    /// "expected …" at the current position, saying so when the text has ended.
    fn expected(&self, what: &str) -> JsonError {
        if self.pos >= self.text.len() {
            self.error(&format!("expected {what} but the text ended"))
        } else {
            self.error(&format!("expected {what}"))
        }
    }

    fn error_at(&self, pos: usize, message: String) -> JsonError {
        let before = self.text.get(..pos).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        JsonError {
            message,
            line: before.matches('\n').count() + 1,
            column: before.get(line_start..).map_or(0, |l| l.chars().count()) + 1,
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            _ => Err(self.expected("a value")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, JsonError> {
        let rest = self.text.get(self.pos..).unwrap_or("");
        let boundary = rest
            .as_bytes()
            .get(word.len())
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        if rest.starts_with(word) && boundary {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.expected("a value"))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            Err(self.error(&format!(
                "arrays and objects nested more than {MAX_DEPTH} deep"
            )))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace();
            if !items.is_empty() && self.peek() == Some(b']') {
                return Err(self.error("trailing comma before `]`"));
            }
            items.push(self.value(depth)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.expected("`,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') if !members.is_empty() => {
                    return Err(self.error("trailing comma before `}`"))
                }
                _ if members.is_empty() => {
                    return Err(self.expected("a key in double quotes or `}`"))
                }
                _ => return Err(self.expected("a key in double quotes")),
            }
            let key = self.string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(self.expected("`:`"));
            }
            self.pos += 1;
            self.skip_whitespace();
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.expected("`,` or `}`")),
            }
        }
    }

    /// A string; `pos` is at its opening quote.
    fn string(&mut self) -> Result<String, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The run stops at an ASCII byte or the end, so both ends are character boundaries.
            out.push_str(self.text.get(run_start..self.pos).unwrap_or(""));
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => {
                    return Err(
                        self.error("a raw line break or other control character inside a string")
                    )
                }
                None => return Err(self.error_at(start, "a string with no closing `\"`".into())),
            }
        }
    }

    /// One escape sequence; `pos` is at its backslash.
    fn escape(&mut self) -> Result<char, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                return self.unicode_escape(start);
            }
            Some(_) => {
                let found = self.text.get(self.pos..).and_then(|r| r.chars().next());
                let found = found.unwrap_or('?');
                return Err(self.error_at(start, format!("unknown escape `\\{found}` in a string")));
            }
            None => return Err(self.error_at(start, "a string with no closing `\"`".into())),
        };
        self.pos += 1;
        Ok(c)
    }

    /// The rest of a `\u` escape, with a second `\u` escape when the first is a high surrogate.
    fn unicode_escape(&mut self, start: usize) -> Result<char, JsonError> {
        let high = self.hex4(start)?;
        let code = match high {
            0xD800..=0xDBFF => {
                let rest = self.text.get(self.pos..).unwrap_or("");
                if !rest.starts_with("\\u") {
                    return Err(self.unpaired(start));
                }
                self.pos += 2;
                let low = self.hex4(start)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.unpaired(start));
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.unpaired(start)),
            _ => high,
        };
        char::from_u32(code).ok_or_else(|| self.unpaired(start))
    }

    fn unpaired(&self, start: usize) -> JsonError {
        self.error_at(
            start,
            "a `\\u` escape of half a surrogate pair without the other half".into(),
        )
    }

    fn hex4(&mut self, start: usize) -> Result<u32, JsonError> {
        let digits = self.text.get(self.pos..self.pos + 4);
        let code = digits
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error_at(start, "a `\\u` escape without four hex digits".into()))?;
        self.pos += 4;
        Ok(code)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error("a number with a leading zero"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.expected("a digit after `-`")),
        }
        let mut whole = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            whole = false;
            if self.digits() == 0 {
                return Err(self.expected("a digit after `.`"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            whole = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.expected("a digit in the exponent"));
            }
        }
        let text = self.text.get(start..self.pos).unwrap_or("");
        if whole {
            if let Ok(i) = text.parse::<i64>() {
                // `-0` keeps its sign as a float.
                return Ok(if i == 0 && negative {
                    Value::Number(-0.0)
                } else {
                    Value::Integer(i)
                });
            }
        }
        match text.parse::<f64>().ok() {
            Some(n) if n.is_finite() => Ok(Value::Number(n)),
            _ => Err(self.error_at(start, "a number too large for a 64-bit float".into())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Compact JSON: no spaces or line breaks.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, None);
    out
}

/// Indented JSON: every element and member on a line of its own, two spaces per level, and
/// `": "` after keys; an empty array or object stays `[]` or `{}`. No final line break.
pub fn to_string_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, Some(0));
    out
}

/// Writes `value`; `indent` is the current depth when pretty, `None` when compact.
fn write_value(out: &mut String, value: &Value, indent: Option<usize>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Integer(i) => out.push_str(&i.to_string()),
        Value::Number(n) => write_number(out, *n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => write_container(out, '[', ']', items, indent, |out, item, inner| {
            write_value(out, item, inner)
        }),
        Value::Object(members) => {
            write_container(out, '{', '}', members, indent, |out, (key, item), inner| {
                write_string(out, key);
                out.push_str(if inner.is_some() { ": " } else { ":" });
                write_value(out, item, inner);
            })
        }
    }
}

fn write_container<T>(
    out: &mut String,
    open: char,
    close: char,
    items: &[T],
    indent: Option<usize>,
    mut write_item: impl FnMut(&mut String, &T, Option<usize>),
) {
    out.push(open);
    if items.is_empty() {
        out.push(close);
        return;
    }
    let inner = indent.map(|depth| depth + 1);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        new_line(out, inner);
        write_item(out, item, inner);
    }
    new_line(out, indent);
    out.push(close);
}

fn new_line(out: &mut String, indent: Option<usize>) {
    if let Some(depth) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
}

/// A string in double quotes, escaping `"`, `\` and control characters.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The JSON text of an `f64`: the fewest significant digits that read back to the same value,
/// in plain notation from 1e-5 up to 1e16 (`0.00001`, `12.5`, `3.0`) and in scientific notation
/// outside it (`1e-7`, `1.5e+16`); `null` when not finite.
fn write_number(out: &mut String, n: f64) {
    if !n.is_finite() {
        out.push_str("null");
        return;
    }
    // The value is 0.digits × 10^point; of two equally close shortest texts, the even one.
    let (digits, point) = shortest_digits(n);
    let (length, point) = (digits.len() as i64, i64::from(point));
    if n.is_sign_negative() {
        out.push('-');
    }
    let zeros = |count: i64| "0".repeat(usize::try_from(count).unwrap_or(0));
    if (length..=16).contains(&point) {
        out.push_str(&digits);
        out.push_str(&zeros(point - length));
        out.push_str(".0");
    } else if (1..=16).contains(&point) {
        let at = usize::try_from(point).unwrap_or(0);
        let (int, frac) = digits.split_at_checked(at).unwrap_or((&digits, ""));
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if (-4..=0).contains(&point) {
        out.push_str("0.");
        out.push_str(&zeros(-point));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at_checked(1).unwrap_or((&digits, ""));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        if point > 1 {
            out.push('+');
        }
        out.push_str(&(point - 1).to_string());
    }
}

/// The shortest round-trip digits of `|x|` and the place of its decimal point, from `{:e}`.
fn shortest_digits(x: f64) -> (String, i32) {
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse::<i32>().unwrap_or(0) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number_text(n: f64) -> String {
        to_string(&Value::Number(n))
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn every_kind_of_value_round_trips_compact_and_pretty() {
        let text = r#"{"a":[1,-2,0.5,true,false,null,"x"],"b":{},"c":[],"d":{"e":[[]]},"f":-0.0}"#;
        let value = parse(text).unwrap();
        assert_eq!(to_string(&value), text);
        assert_eq!(parse(&to_string_pretty(&value)).unwrap(), value);
        assert_eq!(value.to_string(), text);
    }

    #[test]
    fn pretty_text_indents_by_two_spaces_and_keeps_empty_containers_short() {
        let value = parse(r#"{"a": [1, [2.5]], "b": {}, "c": [], "d": {"e": null}}"#).unwrap();
        let expected = "{\n  \"a\": [\n    1,\n    [\n      2.5\n    ]\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": {\n    \"e\": null\n  }\n}";
        assert_eq!(to_string_pretty(&value), expected);
        assert_eq!(to_string_pretty(&Value::Integer(3)), "3");
    }

    #[test]
    fn objects_keep_their_key_order_and_repeated_keys() {
        let value = parse(r#"{"z": 1, "a": 2, "z": 3}"#).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["z", "a", "z"]);
        assert_eq!(value["z"], 1);
        assert_eq!(to_string(&value), r#"{"z":1,"a":2,"z":3}"#);
    }

    #[test]
    fn whitespace_around_and_between_tokens_is_allowed() {
        let value = parse(" \t\r\n[ 1 ,\n\t2 ]\n ").unwrap();
        assert_eq!(
            value,
            Value::Array(vec![Value::Integer(1), Value::Integer(2)])
        );
        assert_eq!(parse("  \"x\"  ").unwrap(), "x");
    }

    #[test]
    fn escapes_are_read_and_written() {
        let value = parse(r#""q\" b\\ s\/ \b\f\n\r\t \u00e9 \u20AC \ud83d\ude00 \u0001""#).unwrap();
        assert_eq!(value, "q\" b\\ s/ \u{8}\u{c}\n\r\t é € 😀 \u{1}");
        assert_eq!(
            to_string(&value),
            r#""q\" b\\ s/ \b\f\n\r\t é € 😀 \u0001""#
        );
        assert_eq!(parse(&to_string(&value)).unwrap(), value);
        assert_eq!(to_string(&Value::from("\u{1f}\u{7f}")), "\"\\u001f\u{7f}\"");
    }

    #[test]
    fn bad_escapes_and_raw_control_characters_are_refused() {
        assert_eq!(
            error(r#"["a\q"]"#),
            "unknown escape `\\q` in a string at line 1, column 4"
        );
        assert_eq!(
            error(r#""\u12G4""#),
            "a `\\u` escape without four hex digits at line 1, column 2"
        );
        assert!(error(r#""\u12""#).starts_with("a `\\u` escape without four hex digits"));
        let unpaired = "a `\\u` escape of half a surrogate pair without the other half";
        assert!(error(r#""\ud83d""#).starts_with(unpaired));
        assert!(error(r#""\ud83d\u0041""#).starts_with(unpaired));
        assert!(error(r#""\ude00""#).starts_with(unpaired));
        assert_eq!(
            error("\"a\nb\""),
            "a raw line break or other control character inside a string at line 1, column 3"
        );
        assert_eq!(
            error("[\"abc"),
            "a string with no closing `\"` at line 1, column 2"
        );
        assert_eq!(
            error("[\"abc\\"),
            "a string with no closing `\"` at line 1, column 6"
        );
    }

    #[test]
    fn errors_say_what_was_expected_and_where() {
        assert_eq!(
            error("[\n  1,\n  2 3]"),
            "expected `,` or `]` at line 3, column 5"
        );
        assert_eq!(error("{\"a\" 1}"), "expected `:` at line 1, column 6");
        assert_eq!(
            error("[1, 2,]"),
            "trailing comma before `]` at line 1, column 7"
        );
        assert_eq!(
            error("{\"a\": 1,}"),
            "trailing comma before `}` at line 1, column 9"
        );
        assert_eq!(
            error("{\"a\": 1 \"b\": 2}"),
            "expected `,` or `}` at line 1, column 9"
        );
        assert_eq!(
            error("{1: 2}"),
            "expected a key in double quotes or `}` at line 1, column 2"
        );
        assert_eq!(
            error("[1] x"),
            "unexpected text after the JSON value at line 1, column 5"
        );
        assert_eq!(
            error(""),
            "expected a value but the text ended at line 1, column 1"
        );
        assert_eq!(
            error("\n "),
            "expected a value but the text ended at line 2, column 2"
        );
        assert_eq!(
            error("{"),
            "expected a key in double quotes or `}` but the text ended at line 1, column 2"
        );
        assert_eq!(
            error("[1,"),
            "expected a value but the text ended at line 1, column 4"
        );
        assert_eq!(error("not json"), "expected a value at line 1, column 1");
        assert_eq!(error("[tru]"), "expected a value at line 1, column 2");
        assert_eq!(error("[nulls]"), "expected a value at line 1, column 2");
        assert_eq!(error("[NaN]"), "expected a value at line 1, column 2");
        assert_eq!(error("\u{feff}{}"), "expected a value at line 1, column 1");
        // Columns count characters, not bytes.
        assert_eq!(
            error("[\"é€😀\" 1]"),
            "expected `,` or `]` at line 1, column 8"
        );
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for bad in [
            "01", "-", "-a", "1.", ".5", "1e", "1e+", "+1", "0x10", "1.e5", "Infinity",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            error("[01]"),
            "a number with a leading zero at line 1, column 3"
        );
        assert_eq!(
            error("[1.]"),
            "expected a digit after `.` at line 1, column 4"
        );
        assert_eq!(
            error("1e"),
            "expected a digit in the exponent but the text ended at line 1, column 3"
        );
        assert_eq!(
            error("-"),
            "expected a digit after `-` but the text ended at line 1, column 2"
        );
        assert_eq!(
            error("[1e400]"),
            "a number too large for a 64-bit float at line 1, column 2"
        );
        assert_eq!(parse("0").unwrap(), Value::Integer(0));
        assert_eq!(parse("-12").unwrap(), Value::Integer(-12));
        assert_eq!(parse("1E+2").unwrap(), Value::Number(100.0));
        assert_eq!(parse("2.5e-3").unwrap(), Value::Number(0.0025));
        assert_eq!(parse("1e-400").unwrap(), Value::Number(0.0));
        let minus_zero = parse("-0").unwrap().as_f64().unwrap();
        assert!(minus_zero == 0.0 && minus_zero.is_sign_negative());
        assert_eq!(
            parse("9223372036854775807").unwrap(),
            Value::Integer(i64::MAX)
        );
        assert_eq!(
            parse("9223372036854775808").unwrap(),
            Value::Number(9_223_372_036_854_775_808.0)
        );
    }

    #[test]
    fn floats_read_back_bit_for_bit() {
        let values = [
            -1.1893854837400641,
            -13.743062455009403,
            0.029906013495763186,
            -48.868747193397596,
            -0.9903112628350041,
            1.1710920203840547,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            -1.7976931348623157e308,
            0.1 + 0.2,
            1.0 / 3.0,
            std::f64::consts::PI,
            123456789012345680.0,
            0.0,
            -0.0,
        ];
        for v in values {
            let text = number_text(v);
            let back = parse(&text).unwrap().as_f64().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v:?} written as {text}");
        }
        // Many bit patterns, spread over the whole range.
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            bits = bits
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let v = f64::from_bits(bits);
            if v.is_finite() {
                let back = parse(&number_text(v)).unwrap().as_f64().unwrap();
                assert_eq!(back.to_bits(), v.to_bits(), "{v:?}");
            }
        }
    }

    #[test]
    fn floats_are_written_with_the_fewest_digits_in_the_usual_layout() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-0.7, "-0.7"),
            (12.5, "12.5"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (0.001234, "0.001234"),
            (0.00001, "0.00001"),
            (0.000012, "0.000012"),
            (1e-6, "1e-6"),
            (1.25e-7, "1.25e-7"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.5e100, "-2.5e+100"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (v, text) in cases {
            assert_eq!(number_text(v), text, "{v:?}");
        }
        assert_eq!(to_string(&Value::Integer(4)), "4");
        assert_eq!(to_string(&Value::from(7_usize)), "7");
        assert_eq!(to_string(&Value::Integer(-3)), "-3");
    }

    #[test]
    fn numbers_that_are_not_finite_are_written_as_null() {
        let value = Value::from(vec![f64::NEG_INFINITY, f64::INFINITY, f64::NAN, 1.0]);
        assert_eq!(to_string(&value), "[null,null,null,1.0]");
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_an_error_not_a_stack_overflow() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(
            parse(&too_deep).unwrap_err().message,
            "arrays and objects nested more than 128 deep"
        );
        let hostile = "[{\"a\":".repeat(100_000);
        assert!(parse(&hostile).is_err());
    }

    #[test]
    fn indexing_a_missing_member_or_element_gives_null() {
        let value = parse(r#"{"a": [10, {"b": "c"}]}"#).unwrap();
        assert_eq!(value["a"][0], 10);
        assert_eq!(value["a"][1]["b"], "c");
        assert!(value["x"].is_null());
        assert!(value["a"][5].is_null());
        assert!(value["a"]["b"].is_null());
        assert!(value[0].is_null());
        assert_eq!(
            value.get("a").and_then(Value::as_array).map(Vec::len),
            Some(2)
        );
        assert_eq!(value["a"][0].as_f64(), Some(10.0));
        assert_eq!(value["a"][0].as_i64(), Some(10));
    }

    #[test]
    fn values_compare_with_plain_rust_values() {
        assert_eq!(Value::Integer(2), 2);
        assert_eq!(Value::Integer(2), 2.0);
        assert_eq!(Value::Number(2.0), 2_usize);
        assert_ne!(Value::Number(2.5), 2);
        assert_eq!(Value::Bool(true), true);
        assert_eq!(Value::from("x"), "x");
        assert_ne!(Value::Null, false);
        assert_eq!(Value::from(None::<f64>), Value::Null);
        assert_eq!(
            Value::object([("k", Value::from(1))]),
            parse(r#"{"k":1}"#).unwrap()
        );
    }

    #[test]
    fn arbitrary_text_never_panics() {
        let samples = [
            "",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "\\",
            "\"\\",
            "\"\\u",
            "\"\\ud800\\",
            "-",
            "-0.",
            "1e+",
            "[1,]",
            "{\"a\"}",
            "{\"a\":}",
            "{,}",
            "[,1]",
            "nul",
            "truex",
            "\u{0}",
            "é",
            "[\"\u{7}\"]",
        ];
        for text in samples {
            let _ = parse(text);
        }
        // Every prefix of a real document.
        let doc = r#"{"a": [1, -2.5e-3, "x\u00e9\n", true, null, {"b": []}]}"#;
        for end in (0..=doc.len()).filter(|&i| doc.is_char_boundary(i)) {
            let result = parse(&doc[..end]);
            assert_eq!(result.is_ok(), end == doc.len(), "{}", &doc[..end]);
        }
    }
}
