//! Compact JSON, byte for byte what `serde_json::to_writer` writes, into a byte buffer: a
//! string's plain bytes are passed over a block at a time and copied in one piece up to the
//! next byte that needs an escape, where serde_json looks each byte up and copies each run
//! through its writer. What this writer does not take on (a map key that is not a string, a
//! byte array, a 128-bit number) is an error, and the caller writes that value with
//! serde_json instead; a number with a fraction is written by serde_json itself.

use serde::ser::{self, Serialize};

/// Why a value was not written here: serde_json writes it instead.
#[derive(Debug)]
pub(super) struct Unsupported;

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value this writer leaves to serde_json")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        Unsupported
    }
}

type Result<T = ()> = std::result::Result<T, Unsupported>;

/// Appends `value`'s compact JSON to `out`, or fails having appended part of it.
pub(super) fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result {
    value.serialize(&mut Writer { out })
}

/// A byte that a JSON string holds escaped: a control character, `"` or `\`.
#[inline(always)]
fn needs_escape(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

/// Where the next byte at or after `i` that needs an escape is (`bytes.len()` if none):
/// eight bytes at a time, each word tested for a byte below 0x20, a `"` and a `\` with
/// word arithmetic. A byte past the first one found can test true falsely (a borrow runs
/// on), the first one never, so the lowest one found is the first.
#[inline(always)]
fn next_escape(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    while let Some(word) = bytes.get(i..i + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        let x = u64::from_le_bytes(eight);
        let control = x.wrapping_sub(ONES * 0x20) & !x;
        let quote = x ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let found = (control | quote | backslash) & HIGH;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && !needs_escape(bytes[i]) {
        i += 1;
    }
    i
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it: `\"`, `\\`, `\b`, `\t`,
/// `\n`, `\f`, `\r`, and `\u00xx` (lower-case hex) for the other control characters.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        out.extend_from_slice(&bytes[start..i]);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ]);
            }
        }
        start = i + 1;
    }
    out.push(b'"');
}

/// The serializer: compact JSON into `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    fn integer(&mut self, n: impl std::fmt::Display) {
        use std::io::Write as _;
        // Writing into a vector cannot fail.
        let _ = write!(self.out, "{n}");
    }

    /// A number with a fraction, as serde_json writes it (`null` when not finite).
    fn float<T: Serialize>(&mut self, n: T) -> Result {
        serde_json::to_writer(&mut *self.out, &n).map_err(|_| Unsupported)
    }
}

/// Where a compound value is: nothing written in it yet, or something.
#[derive(PartialEq, Eq)]
enum State {
    /// Opened and closed at once (a length of zero given up front).
    Empty,
    First,
    Rest,
}

/// A sequence, map or struct being written.
struct Compound<'w, 'a> {
    ser: &'w mut Writer<'a>,
    state: State,
    /// Closes a variant's object after the compound itself.
    variant: bool,
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if self.state != State::First {
            self.ser.raw(b",");
        }
        self.state = State::Rest;
    }

    fn close(self, end: &[u8]) {
        if self.state != State::Empty {
            self.ser.raw(end);
        }
        if self.variant {
            self.ser.raw(b"}");
        }
    }
}

impl<'w, 'a> Writer<'a> {
    fn open(&'w mut self, start: &[u8], end: &[u8], len: Option<usize>) -> Compound<'w, 'a> {
        self.raw(start);
        let state = if len == Some(0) {
            self.raw(end);
            State::Empty
        } else {
            State::First
        };
        Compound {
            ser: self,
            state,
            variant: false,
        }
    }

    /// `{"variant":` before a variant's value.
    fn variant_key(&mut self, variant: &str) {
        self.raw(b"{");
        string(self.out, variant);
        self.raw(b":");
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result {
        self.raw(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result {
        self.integer(v);
        Ok(())
    }
    fn serialize_i128(self, _v: i128) -> Result {
        Err(Unsupported)
    }
    fn serialize_u128(self, _v: u128) -> Result {
        Err(Unsupported)
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.float(v)
    }
    fn serialize_f64(self, v: f64) -> Result {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result {
        string(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_unit_variant(self, _name: &'static str, _i: u32, variant: &'static str) -> Result {
        string(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        self.variant_key(variant);
        value.serialize(&mut *self)?;
        self.raw(b"}");
        Ok(())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq> {
        Ok(self.open(b"[", b"]", len))
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        Ok(self.open(b"[", b"]", Some(len)))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Ok(self.open(b"[", b"]", Some(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        self.variant_key(variant);
        let mut c = self.open(b"[", b"]", Some(len));
        c.variant = true;
        Ok(c)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap> {
        Ok(self.open(b"{", b"}", len))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        Ok(self.open(b"{", b"}", Some(len)))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        self.variant_key(variant);
        let mut c = self.open(b"{", b"}", Some(len));
        c.variant = true;
        Ok(c)
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.comma();
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result {
        self.close(b"]");
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.comma();
        key.serialize(Key {
            ser: &mut *self.ser,
        })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.ser.raw(b":");
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result {
        self.close(b"}");
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        self.comma();
        string(self.ser.out, key);
        self.ser.raw(b":");
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result {
        self.close(b"}");
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result {
        ser::SerializeStruct::end(self)
    }
}

/// A map key: a string (or a unit variant's name, or a newtype around either); anything else
/// is left to serde_json, which quotes numbers and booleans.
struct Key<'w, 'a> {
    ser: &'w mut Writer<'a>,
}

impl ser::Serializer for Key<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> Result {
        string(self.ser.out, v);
        Ok(())
    }
    fn serialize_unit_variant(self, _name: &'static str, _i: u32, variant: &'static str) -> Result {
        string(self.ser.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result {
        Err(Unsupported)
    }
    fn serialize_i8(self, _v: i8) -> Result {
        Err(Unsupported)
    }
    fn serialize_i16(self, _v: i16) -> Result {
        Err(Unsupported)
    }
    fn serialize_i32(self, _v: i32) -> Result {
        Err(Unsupported)
    }
    fn serialize_i64(self, _v: i64) -> Result {
        Err(Unsupported)
    }
    fn serialize_u8(self, _v: u8) -> Result {
        Err(Unsupported)
    }
    fn serialize_u16(self, _v: u16) -> Result {
        Err(Unsupported)
    }
    fn serialize_u32(self, _v: u32) -> Result {
        Err(Unsupported)
    }
    fn serialize_u64(self, _v: u64) -> Result {
        Err(Unsupported)
    }
    fn serialize_f32(self, _v: f32) -> Result {
        Err(Unsupported)
    }
    fn serialize_f64(self, _v: f64) -> Result {
        Err(Unsupported)
    }
    fn serialize_char(self, _v: char) -> Result {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Result {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result {
        Err(Unsupported)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(Unsupported)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// What this writer gives, or serde_json's output where it leaves a value to serde_json.
    fn ours<T: Serialize>(value: &T) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        write(&mut out, value).ok().map(|()| out)
    }

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it() {
        let all: String = (0u8..0x80).map(char::from).collect();
        for text in [
            all.clone(),
            format!("{all}{all}"),
            "plain text longer than one block of sixteen bytes".to_owned(),
            "ünïcödé \u{2028} \u{1f600} \"quoted\" back\\slash\n".repeat(3),
            String::new(),
            "\u{7f}\u{1f}\u{0}".to_owned(),
        ] {
            let mut out = Vec::new();
            string(&mut out, &text);
            assert_eq!(
                out,
                serde_json::to_vec(&text).unwrap_or_default(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn compounds_variants_and_numbers_read_as_serde_json_writes_them() {
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(i32, String),
            Empty(),
            Struct { a: Option<bool>, b: Vec<u8> },
            Nothing {},
        }
        #[derive(serde::Serialize)]
        #[serde(tag = "type")]
        enum Tagged {
            A { x: f64 },
            B,
        }
        #[derive(serde::Serialize)]
        struct S<'a> {
            e: Vec<E>,
            t: Vec<Tagged>,
            tuple: (u64, i64, char, ()),
            s: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
            map: std::collections::BTreeMap<String, Value>,
        }
        let value = S {
            e: vec![
                E::Unit,
                E::New(7),
                E::Tuple(-3, "x\ty".into()),
                E::Empty(),
                E::Struct { a: None, b: vec![] },
                E::Struct {
                    a: Some(true),
                    b: vec![1, 2],
                },
                E::Nothing {},
            ],
            t: vec![
                Tagged::A { x: 1.5e-7 },
                Tagged::A { x: f64::NAN },
                Tagged::B,
            ],
            tuple: (u64::MAX, i64::MIN, '"', ()),
            s: "a \"b\" \\ c\u{1}",
            skipped: None,
            map: [
                (
                    "k\n".to_owned(),
                    json!({"n": [1, -2, 3.25, 1e300], "e": {}, "a": []}),
                ),
                ("".to_owned(), Value::Null),
            ]
            .into_iter()
            .collect(),
        };
        assert_eq!(ours(&value), serde_json::to_vec(&value).ok());
    }

    #[test]
    fn a_map_key_that_is_no_string_is_left_to_serde_json() {
        let map: std::collections::BTreeMap<u32, &str> = [(1, "a")].into_iter().collect();
        assert!(ours(&map).is_none());
        assert!(ours(&vec![1u128]).is_none());
    }

    /// Any JSON document: strings of any characters, numbers of every kind, nested.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[\\x00-\\x7f]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_string_is_written_as_serde_json_writes_it(text in any::<String>()) {
            let mut out = Vec::new();
            string(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_vec(&text).unwrap_or_default());
        }

        #[test]
        fn any_document_is_written_as_serde_json_writes_it(doc in value()) {
            prop_assert_eq!(ours(&doc), serde_json::to_vec(&doc).ok());
        }
    }
}
