//! Exact conversion between `f64` and decimal text.
//!
//! The standard library converts exactly too, but its formatting and parsing carry several
//! algorithms and their tables: together about 8% of the gzipped web bundle. The numbers this app
//! writes and reads are short, so working on a float's exact decimal expansion is quick enough
//! and takes little code. Every function here gives what the standard library would:
//! [`Fixed`] prints like `format!("{x:.N}")`, [`Plain`] like `format!("{x}")`, [`Scientific`]
//! like `format!("{x:e}")`, and [`parse`] reads like `str::parse::<f64>`. One difference: when
//! two shortest texts are equally close to a float, [`Plain`] and [`Scientific`] take the one
//! with the even last digit, where the standard library rounds up. Both read back to the same
//! float.

use std::cmp::Ordering;
use std::fmt;

/// A non-negative decimal `digits × 10^exp`; `digits` are ASCII with no leading zeros and are
/// empty for zero.
#[derive(Clone, PartialEq)]
struct Decimal {
    digits: Vec<u8>,
    exp: i32,
}

impl Decimal {
    /// The place just above the leading digit: the value lies in `[10^(top-1), 10^top)`.
    fn top(&self) -> i32 {
        self.digits.len() as i32 + self.exp
    }

    /// The digit at place `10^place`.
    fn digit_at(&self, place: i32) -> u8 {
        let from_right = place - self.exp;
        let len = self.digits.len() as i32;
        if from_right < 0 || from_right >= len {
            b'0'
        } else {
            self.digits[(len - 1 - from_right) as usize]
        }
    }

    fn compare(&self, other: &Decimal) -> Ordering {
        match (self.digits.is_empty(), other.digits.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        // Both are normalised, so with the same leading place the digit strings compare like
        // the numbers: a string that is a prefix of the other is the smaller number.
        self.top()
            .cmp(&other.top())
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Rounding {
    Down,
    Up,
    HalfEven,
}

/// `d` rounded to a multiple of `10^place`.
fn round_at(d: &Decimal, place: i32, mode: Rounding) -> Decimal {
    if place <= d.exp || d.digits.is_empty() {
        return d.clone();
    }
    let cut = (place - d.exp) as usize;
    let len = d.digits.len();
    let kept_len = len.saturating_sub(cut);
    let mut kept = d.digits[..kept_len].to_vec();
    let dropped = &d.digits[kept_len..];
    // Below the dropped digits there are only zeros; when `cut > len`, zeros come first.
    let first = if cut > len { b'0' } else { dropped[0] };
    let rest_nonzero = dropped
        .iter()
        .skip(usize::from(cut <= len))
        .any(|&c| c != b'0');
    let up = match mode {
        Rounding::Down => false,
        Rounding::Up => dropped.iter().any(|&c| c != b'0'),
        Rounding::HalfEven => {
            first > b'5'
                || (first == b'5'
                    && (rest_nonzero || kept.last().is_some_and(|&c| (c - b'0') % 2 == 1)))
        }
    };
    if up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    normalise(kept, place)
}

/// Strips leading and trailing zeros.
fn normalise(mut digits: Vec<u8>, mut exp: i32) -> Decimal {
    let lead = digits.iter().take_while(|&&c| c == b'0').count();
    digits.drain(..lead);
    while digits.last() == Some(&b'0') {
        digits.pop();
        exp += 1;
    }
    Decimal { digits, exp }
}

const BASE: u64 = 1_000_000_000;

/// `limbs × f`, little-endian base 10^9.
fn mul_decimal_limbs(limbs: &mut Vec<u32>, f: u32) {
    let mut carry = 0u64;
    for limb in limbs.iter_mut() {
        let t = u64::from(*limb) * u64::from(f) + carry;
        *limb = (t % BASE) as u32;
        carry = t / BASE;
    }
    while carry > 0 {
        limbs.push((carry % BASE) as u32);
        carry /= BASE;
    }
}

/// The exact decimal value of `m × 2^e`.
fn expand(m: u64, e: i32) -> Decimal {
    let mut limbs = Vec::new();
    let mut v = m;
    while v > 0 {
        limbs.push((v % BASE) as u32);
        v /= BASE;
    }
    // m × 2^e = m × 2^e, or m × 5^-e × 10^e: multiply in the largest steps that fit a limb.
    let (mut count, big_step, big_factor, small_factor) = if e >= 0 {
        (e as u32, 31, 1u32 << 31, 2u32)
    } else {
        (e.unsigned_abs(), 13, 1_220_703_125, 5)
    };
    while count > 0 {
        let step = count.min(big_step);
        let factor = if step == big_step {
            big_factor
        } else {
            small_factor.pow(step)
        };
        mul_decimal_limbs(&mut limbs, factor);
        count -= step;
    }
    let mut digits = Vec::with_capacity(limbs.len() * 9);
    for (i, &limb) in limbs.iter().rev().enumerate() {
        let mut buf = [b'0'; 9];
        let mut v = limb;
        for slot in buf.iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
        let skip = if i == 0 {
            buf.iter().take_while(|&&c| c == b'0').count()
        } else {
            0
        };
        digits.extend_from_slice(&buf[skip..]);
    }
    normalise(digits, e.min(0))
}

/// `|x| = m × 2^e` for finite `x`, with `m < 2^53`; also whether the float below `|x|` is
/// closer than the one above (a power of two with a smaller exponent beneath it).
fn decode(x: f64) -> (u64, i32, bool) {
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0 {
        (fraction, -1074, false)
    } else {
        (
            fraction | (1 << 52),
            biased - 1075,
            fraction == 0 && biased > 1,
        )
    }
}

/// The shortest decimal that reads back as `|x|` (finite, not zero); of two equally short and
/// equally close, the one with the even last digit.
fn shortest(x: f64) -> Decimal {
    let (m, e, closer_below) = decode(x);
    if let Some(d) = shortest_in_128_bits(m, e, closer_below) {
        return d;
    }
    let exact = expand(m, e);
    // Every decimal strictly between `low` and `high` reads back as x; the ends do when the
    // mantissa is even, because a tie then rounds to x.
    let low = if closer_below {
        expand(4 * m - 1, e - 2)
    } else {
        expand(2 * m - 1, e - 1)
    };
    let high = expand(2 * m + 1, e - 1);
    let inclusive = m % 2 == 0;
    let reads_back = |d: &Decimal| {
        let above = d.compare(&low);
        let below = d.compare(&high);
        if inclusive {
            above.is_ge() && below.is_le()
        } else {
            above.is_gt() && below.is_lt()
        }
    };
    let top = exact.top();
    // The decimal with `length` significant digits that reads back as x, if there is one. Any
    // such decimal lies between `down` and x or between x and `up`, so checking those two is
    // enough.
    let candidate = |length: i32| {
        let place = top - length;
        let down = round_at(&exact, place, Rounding::Down);
        let up = round_at(&exact, place, Rounding::Up);
        match (reads_back(&down), reads_back(&up)) {
            (true, true) => Some(round_at(&exact, place, Rounding::HalfEven)),
            (true, false) => Some(down),
            (false, true) => Some(up),
            (false, false) => None,
        }
    };
    // A length that works makes every longer one work (append a zero), so the shortest is
    // found by bisection; 17 digits always suffice.
    let (mut fails, mut works) = (0, 17);
    while works - fails > 1 {
        let mid = (fails + works) / 2;
        if candidate(mid).is_some() {
            works = mid;
        } else {
            fails = mid;
        }
    }
    candidate(works).unwrap_or(exact)
}

/// [`shortest`] for the common case, in 128-bit integers: `x = m × 2^e` below 2^52, with e
/// above −127. There the fewest decimals that read back are the fewest significant digits,
/// and the candidates with that many decimals are the two neighbours of x.
fn shortest_in_128_bits(m: u64, e: i32, closer_below: bool) -> Option<Decimal> {
    if e >= 0 || e <= -127 {
        return None;
    }
    let shift = e.unsigned_abs();
    let unit = 1u128 << shift;
    let even = m.is_multiple_of(2);
    for decimals in 0..=22u32 {
        // x × 10^d = X / 2^shift: the decimals below and above x are n and n + 1 over 10^d.
        let scale = 10u128.pow(decimals);
        let big_x = u128::from(m) * scale;
        let (n, rest) = (big_x >> shift, big_x & (unit - 1));
        if rest == 0 {
            return Some(decimal_of(n, -(decimals as i32)));
        }
        // A decimal reads back as x within half an ulp of it, 2^(e−1) (or 2^(e−2) below a power
        // of two), endpoints included when m is even; scaled by 2^shift × 10^d those bounds
        // are scale / 2 and scale / 4.
        let within = |gap: u128, quarters: u128| {
            let (lhs, rhs) = (gap * quarters, scale);
            lhs < rhs || (lhs == rhs && even)
        };
        let below_ok = within(rest, if closer_below { 4 } else { 2 });
        let above_ok = within(unit - rest, 2);
        let pick = match (below_ok, above_ok) {
            (true, true) => match rest.cmp(&(unit - rest)) {
                Ordering::Less => n,
                Ordering::Greater => n + 1,
                Ordering::Equal => n + (n % 2),
            },
            (true, false) => n,
            (false, true) => n + 1,
            (false, false) => continue,
        };
        return Some(decimal_of(pick, -(decimals as i32)));
    }
    None
}

/// Writes `d` without an exponent, with exactly `decimals` digits after the point (and no point
/// when that is 0).
fn write_positional(out: &mut String, d: &Decimal, decimals: i32) {
    for place in (0..d.top().max(1)).rev() {
        out.push(char::from(d.digit_at(place)));
    }
    if decimals > 0 {
        out.push('.');
        for place in (-decimals..0).rev() {
            out.push(char::from(d.digit_at(place)));
        }
    }
}

fn write_special(out: &mut String, x: f64) -> bool {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x < 0.0 { "-inf" } else { "inf" });
    } else {
        if x.is_sign_negative() {
            out.push('-');
        }
        return false;
    }
    true
}

/// `m × 2^e × 10^decimals` rounded half to even, when 128-bit integers hold it exactly: every
/// value with at most 22 decimals below about 10^15 (all the app shows) takes this quick path.
fn scaled_in_128_bits(m: u64, e: i32, decimals: i32) -> Option<u128> {
    if !(0..=22).contains(&decimals) {
        return None;
    }
    // m < 2^53 and 10^22 < 2^74, so the product fits.
    let n = u128::from(m) * 10u128.pow(decimals as u32);
    if e >= 0 {
        return (e.unsigned_abs() < n.leading_zeros()).then(|| n << e);
    }
    let shift = e.unsigned_abs();
    if shift >= 128 {
        // n × 2^e < 2^127 × 2^-128: below one half, so it rounds to zero.
        return Some(0);
    }
    let (q, rest, half) = (n >> shift, n & ((1 << shift) - 1), 1u128 << (shift - 1));
    Some(if rest > half || (rest == half && q & 1 == 1) {
        q + 1
    } else {
        q
    })
}

/// The decimal `n × 10^exp`.
fn decimal_of(mut n: u128, exp: i32) -> Decimal {
    let mut digits = Vec::new();
    while n > 0 {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
    }
    digits.reverse();
    normalise(digits, exp)
}

/// `x` with exactly this many decimals, rounded half to even on its exact value: the text of
/// `format!("{x:.N}")`, minus sign of a negative zero included.
pub struct Fixed(pub f64, pub usize);

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Fixed(x, decimals) = *self;
        let mut out = String::new();
        if !write_special(&mut out, x) {
            let decimals = decimals.min(10_000) as i32;
            let (m, e, _) = decode(x);
            let rounded = match scaled_in_128_bits(m, e, decimals) {
                Some(n) => decimal_of(n, -decimals),
                None => round_at(&expand(m, e), -decimals, Rounding::HalfEven),
            };
            write_positional(&mut out, &rounded, decimals);
        }
        f.write_str(&out)
    }
}

/// `x` in the fewest digits that read back as `x`, without an exponent: the text of
/// `format!("{x}")` (`0.1`, `-2`, `1000000`).
pub struct Plain(pub f64);

impl fmt::Display for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let x = self.0;
        if !write_special(&mut out, x) {
            if x == 0.0 {
                out.push('0');
            } else {
                let d = shortest(x);
                write_positional(&mut out, &d, (-d.exp).max(0));
            }
        }
        f.write_str(&out)
    }
}

/// `x` in the fewest significant digits that read back as `x`, as `d.ddde±x`: the text of
/// `format!("{x:e}")` (`1e-7`, `-1.5e16`, `0e0`).
pub struct Scientific(pub f64);

impl fmt::Display for Scientific {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let x = self.0;
        if !write_special(&mut out, x) {
            let (digits, exponent) = if x == 0.0 {
                (vec![b'0'], 0)
            } else {
                let d = shortest(x);
                let exponent = d.top() - 1;
                (d.digits, exponent)
            };
            out.push(char::from(digits[0]));
            if digits.len() > 1 {
                out.push('.');
                out.extend(digits[1..].iter().map(|&c| char::from(c)));
            }
            out.push('e');
            out.push_str(&exponent.to_string());
        }
        f.write_str(&out)
    }
}

/// The fewest significant digits that read back as `|x|` (finite), as ASCII digits with no
/// trailing zeros, and the position of the decimal point: `|x| = 0.DIGITS × 10^point`. Zero is
/// `("0", 1)`.
pub fn shortest_digits(x: f64) -> (String, i32) {
    if x == 0.0 || !x.is_finite() {
        return ("0".to_string(), 1);
    }
    let d = shortest(x);
    let point = d.top();
    (d.digits.iter().map(|&c| char::from(c)).collect(), point)
}

// ---------------------------------------------------------------------------------------------
// Reading

/// More significant digits than any `f64` needs to round correctly (767 can matter); later
/// non-zero digits only ever nudge the value, which one extra `1` digit stands in for.
const MAX_DIGITS: usize = 800;

/// Reads a decimal number: an optional sign, digits with an optional point (`1`, `1.`, `.5`),
/// then an optional exponent (`e-3`, `E+7`). Rounds to the nearest `f64`, ties to even; too
/// large becomes an infinity, too small a zero. `None` for anything else, including `inf` and
/// `NaN`, which `str::parse` would take.
pub fn parse(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut digits: Vec<u8> = Vec::new();
    let mut dropped_nonzero = false;
    // The value so far is DIGITS × 10^exp.
    let mut exp: i64 = 0;
    let mut any_digit = false;
    let mut seen_point = false;
    while let Some(&c) = bytes.get(i) {
        match c {
            b'0'..=b'9' => {
                any_digit = true;
                if seen_point {
                    exp -= 1;
                }
                if digits.is_empty() && c == b'0' {
                    // A leading zero adds nothing.
                } else if digits.len() < MAX_DIGITS {
                    digits.push(c - b'0');
                } else {
                    exp += 1;
                    dropped_nonzero |= c != b'0';
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if !any_digit {
        return None;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        let sign = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                -1
            }
            Some(b'+') => {
                i += 1;
                1
            }
            _ => 1,
        };
        let start = i;
        let mut value: i64 = 0;
        while let Some(&c @ b'0'..=b'9') = bytes.get(i) {
            value = (value * 10 + i64::from(c - b'0')).min(1_000_000_000);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += sign * value;
    }
    if i != bytes.len() {
        return None;
    }
    if dropped_nonzero {
        digits.push(1);
        exp -= 1;
    }
    let magnitude = magnitude(&digits, exp);
    Some(if negative { -magnitude } else { magnitude })
}

/// Powers of ten that are exact in an `f64`.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `DIGITS × 10^exp` as the nearest `f64`; digits are values 0–9, the first not zero.
fn magnitude(digits: &[u8], exp: i64) -> f64 {
    if digits.is_empty() {
        return 0.0;
    }
    let top = digits.len() as i64 + exp;
    if top > 310 {
        return f64::INFINITY;
    }
    if top < -325 {
        return 0.0;
    }
    let exp = exp as i32;
    if digits.len() <= 15 && exp.unsigned_abs() <= 22 {
        // Both the integer and the power are exact, so one IEEE operation rounds correctly.
        let n = digits.iter().fold(0u64, |n, &d| n * 10 + u64::from(d)) as f64;
        let power = EXACT_POWERS[exp.unsigned_abs() as usize];
        return if exp >= 0 { n * power } else { n / power };
    }
    let mut n = Big::default();
    for chunk in digits.chunks(9) {
        let value = chunk.iter().fold(0u32, |n, &d| n * 10 + u32::from(d));
        n.mul_add(10u32.pow(chunk.len() as u32), value);
    }
    if exp >= 0 {
        n.mul_pow10(exp as u32);
        let bits = n.bit_len();
        let shift = bits.saturating_sub(64);
        let (q, sticky) = n.top_bits(shift);
        to_f64(q, sticky, shift as i32)
    } else {
        let mut d = Big::default();
        d.mul_add(1, 1);
        d.mul_pow10(exp.unsigned_abs());
        // Scale so that the quotient has 55 or 56 bits: enough for the rounding bit and more.
        let s = 55 + d.bit_len() as i32 - n.bit_len() as i32;
        if s >= 0 {
            n.shl(s as u32);
        } else {
            d.shl(s.unsigned_abs());
        }
        let (q, sticky) = n.div_small_quotient(&d, 56);
        to_f64(q, sticky, -s)
    }
}

/// The nearest `f64` to `(q + f) × 2^exp2`, where `0 <= f < 1` and `f > 0` exactly when
/// `sticky`.
fn to_f64(q: u64, sticky: bool, exp2: i32) -> f64 {
    if q == 0 {
        return 0.0;
    }
    let bits = 64 - q.leading_zeros() as i32;
    let lead = exp2 + bits - 1;
    if lead > 1023 {
        return f64::INFINITY;
    }
    // Normal numbers keep 53 bits; below 2^-1022 the last bit is always 2^-1074.
    let keep = if lead >= -1022 {
        53
    } else {
        53 - (-1022 - lead)
    };
    let drop = bits - keep;
    let (mut mant, mut e) = if drop <= 0 {
        (u128::from(q) << (-drop) as u32, exp2 + drop)
    } else if drop > 65 {
        return 0.0;
    } else {
        let q = u128::from(q);
        let half = 1u128 << (drop - 1);
        let rest = q & ((1u128 << drop) - 1);
        let mut mant = q >> drop;
        if rest > half || (rest == half && (sticky || mant & 1 == 1)) {
            mant += 1;
        }
        (mant, exp2 + drop)
    };
    if mant == 1 << 53 {
        mant >>= 1;
        e += 1;
    }
    let mant = mant as u64;
    let bits = if mant >= 1 << 52 {
        let biased = e + 1075;
        if biased >= 2047 {
            return f64::INFINITY;
        }
        ((biased as u64) << 52) | (mant & ((1 << 52) - 1))
    } else {
        mant
    };
    f64::from_bits(bits)
}

/// A natural number, little-endian base 2^32.
#[derive(Default)]
struct Big(Vec<u32>);

impl Big {
    /// `self × f + add`.
    fn mul_add(&mut self, f: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in self.0.iter_mut() {
            let t = u64::from(*limb) * u64::from(f) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut n: u32) {
        while n > 0 {
            let step = n.min(9);
            self.mul_add(10u32.pow(step), 0);
            n -= step;
        }
    }

    fn bit_len(&self) -> u32 {
        match self.0.iter().rposition(|&l| l != 0) {
            Some(i) => i as u32 * 32 + 32 - self.0[i].leading_zeros(),
            None => 0,
        }
    }

    fn bit(&self, i: u32) -> bool {
        self.0
            .get((i / 32) as usize)
            .is_some_and(|l| l >> (i % 32) & 1 == 1)
    }

    fn shl(&mut self, n: u32) {
        let (limbs, bits) = ((n / 32) as usize, n % 32);
        if bits > 0 {
            let mut carry = 0;
            for limb in self.0.iter_mut() {
                let next = *limb >> (32 - bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    /// Bits `shift..shift + 64` as a number, and whether any bit below them is set.
    fn top_bits(&self, shift: u32) -> (u64, bool) {
        let q = (0..64)
            .rev()
            .fold(0u64, |q, i| q << 1 | u64::from(self.bit(shift + i)));
        (q, (0..shift).any(|i| self.bit(i)))
    }

    fn compare(&self, other: &Big) -> Ordering {
        let len = self.0.len().max(other.0.len());
        (0..len)
            .rev()
            .map(|i| {
                let a = self.0.get(i).copied().unwrap_or(0);
                let b = other.0.get(i).copied().unwrap_or(0);
                a.cmp(&b)
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// `self -= other`, for `self >= other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let t = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            *limb = t as u32;
            borrow = i64::from(t < 0);
        }
    }

    /// `self >> n`.
    fn shr(&self, n: u32) -> Big {
        let (limbs, bits) = ((n / 32) as usize, n % 32);
        let src = self.0.get(limbs..).unwrap_or(&[]);
        let limb = |i: usize| src.get(i).copied().unwrap_or(0);
        Big((0..src.len())
            .map(|i| match bits {
                0 => limb(i),
                _ => (limb(i) >> bits) | (limb(i + 1) << (32 - bits)),
            })
            .collect())
    }

    /// `self / d` when the quotient is below `2^bits` (`bits <= 64`), and whether there is a
    /// remainder: long division, one quotient bit at a time.
    fn div_small_quotient(&self, d: &Big, bits: u32) -> (u64, bool) {
        let mut r = self.shr(bits);
        let mut q = 0u64;
        for i in (0..bits).rev() {
            r.shl(1);
            if self.bit(i) {
                match r.0.first_mut() {
                    Some(low) => *low |= 1,
                    None => r.0.push(1),
                }
            }
            q <<= 1;
            if r.compare(d).is_ge() {
                r.sub(d);
                q |= 1;
            }
        }
        (q, r.bit_len() > 0)
    }
}

// proptest is a native dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixed(x: f64, n: usize) -> String {
        Fixed(x, n).to_string()
    }

    #[test]
    fn fixed_matches_the_standard_library_on_chosen_values() {
        let values = [
            0.0,
            -0.0,
            0.125,
            0.375,
            2.5,
            3.5,
            -0.001,
            0.35,
            1e21,
            1e-7,
            123.456,
            0.5,
            1.5,
            999.9996,
            5e-324,
            1.7976931348623157e308,
            -2.675,
            1_000_000.0,
            0.045,
        ];
        for x in values {
            for n in 0..8 {
                assert_eq!(fixed(x, n), format!("{x:.n$}"), "{x:e} to {n} places");
            }
        }
        assert_eq!(fixed(f64::NAN, 2), "NaN");
        assert_eq!(fixed(f64::INFINITY, 2), "inf");
        assert_eq!(fixed(f64::NEG_INFINITY, 2), "-inf");
    }

    #[test]
    fn plain_and_scientific_match_the_standard_library_on_chosen_values() {
        let values = [
            0.0,
            -0.0,
            1.0,
            0.1,
            0.3,
            2.0 / 3.0,
            1e21,
            1e22,
            1e-7,
            123.456,
            5e-324,
            1.7976931348623157e308,
            -1e16,
            9007199254740993.0,
            0.000123,
            2.2250738585072014e-308,
            0.5,
            0.25,
            2.0,
            1024.0,
            9.5367431640625e-7,
            1099511627776.0,
            4503599627370496.0,
        ];
        for x in values {
            assert_eq!(Plain(x).to_string(), format!("{x}"));
            assert_eq!(Scientific(x).to_string(), format!("{x:e}"));
        }
        assert_eq!(shortest_digits(0.0125), ("125".to_string(), -1));
        assert_eq!(shortest_digits(120.0), ("12".to_string(), 3));
    }

    #[test]
    fn parse_reads_what_the_standard_library_reads() {
        let texts = [
            "0",
            "-0",
            "+1",
            "1.",
            ".5",
            "1e3",
            "1E-3",
            "0.1",
            "123456789012345678901234567890",
            "2.2250738585072011e-308",
            "4.9e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309",
            "1e-400",
            "9007199254740993",
            "0.30000000000000004",
            "1e23",
            "8.98846567431158e307",
        ];
        for text in texts {
            let ours = parse(text).unwrap();
            let std: f64 = text.parse().unwrap();
            assert_eq!(ours.to_bits(), std.to_bits(), "{text}");
        }
        let long = format!("0.{}1", "0".repeat(900));
        assert_eq!(parse(&long), Some(0.0));
        let long = format!("1{}e-900", "0".repeat(900));
        assert_eq!(parse(&long), Some(1.0));
        let tie_above = format!("2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125{}", "0".repeat(50));
        assert_eq!(parse(&tie_above), tie_above.parse::<f64>().ok());
        for bad in [
            "", "-", ".", "e5", "1e", "1e+", "inf", "NaN", "1.2.3", "0x10", "1 ", " 1",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn fixed_agrees_for_any_float(bits in any::<u64>(), n in 0usize..12) {
            let x = f64::from_bits(bits);
            prop_assert_eq!(fixed(x, n), format!("{x:.n$}"));
        }

        #[test]
        fn fixed_agrees_for_app_sized_values(x in -1e7f64..1e7, n in 0usize..8) {
            prop_assert_eq!(fixed(x, n), format!("{x:.n$}"));
        }

        #[test]
        fn shortest_text_reads_back_and_is_as_short(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let ours = Scientific(x).to_string();
            let std = format!("{x:e}");
            prop_assert_eq!(ours.len(), std.len());
            prop_assert_eq!(ours.parse::<f64>().unwrap().to_bits(), x.to_bits());
            if ours != std {
                // Equally short and close: ours ends in the even digit.
                let last = ours.split('e').next().unwrap().bytes().last().unwrap();
                prop_assert!((last - b'0').is_multiple_of(2), "{} vs {}", ours, std);
            } else {
                prop_assert_eq!(Plain(x).to_string(), format!("{x}"));
            }
        }

        #[test]
        fn shortest_agrees_for_app_sized_values(x in -1e7f64..1e7, k in -1_000_000i64..1_000_000, d in 0i32..8) {
            for v in [x, k as f64 / 10f64.powi(d), x * 1e-12] {
                let ours = Scientific(v).to_string();
                prop_assert_eq!(ours.parse::<f64>().unwrap().to_bits(), v.to_bits());
                prop_assert_eq!(ours.len(), format!("{v:e}").len());
                if ours == format!("{v:e}") {
                    prop_assert_eq!(Plain(v).to_string(), format!("{v}"));
                }
            }
        }

        #[test]
        fn parse_agrees_for_any_float_text(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            for text in [format!("{x}"), format!("{x:e}"), format!("{x:.3e}"), format!("{x:.20e}")] {
                prop_assert_eq!(parse(&text).map(f64::to_bits), text.parse::<f64>().ok().map(f64::to_bits), "{}", text);
            }
        }

        #[test]
        fn parse_agrees_on_digit_strings(
            int in "[0-9]{0,30}", frac in "[0-9]{0,30}", exp in -350i32..350, point in any::<bool>()
        ) {
            prop_assume!(!int.is_empty() || !frac.is_empty());
            let text = if point { format!("{int}.{frac}e{exp}") } else { format!("{int}{frac}e{exp}") };
            prop_assert_eq!(parse(&text).map(f64::to_bits), text.parse::<f64>().ok().map(f64::to_bits), "{}", text);
        }
    }
}
