//! Colour-blind-safe palettes and the two themes.

/// A colour as red, green, blue bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Relative luminance, 0 (black) to 1 (white), for choosing legible text.
    pub fn luminance(self) -> f64 {
        let lin = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(self.0) + 0.7152 * lin(self.1) + 0.0722 * lin(self.2)
    }

    fn mix(self, other: Rgb, t: f64) -> Rgb {
        let m = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb(m(self.0, other.0), m(self.1, other.1), m(self.2, other.2))
    }
}

/// How values map to colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Palette {
    /// Purple (negative), near-white (0), orange (positive): ColorBrewer PuOr, which stays
    /// distinguishable under the common colour-vision deficiencies. For signed matrices.
    Diverging,
    /// Light to dark blue (ColorBrewer Blues), for probabilities from 0 to 1.
    Sequential,
}

const PU_OR: [Rgb; 5] = [
    Rgb(0x54, 0x27, 0x88),
    Rgb(0x99, 0x8e, 0xc3),
    Rgb(0xf7, 0xf7, 0xf7),
    Rgb(0xf1, 0xa3, 0x40),
    Rgb(0xb3, 0x58, 0x06),
];

const BLUES: [Rgb; 5] = [
    Rgb(0xf7, 0xfb, 0xff),
    Rgb(0xc6, 0xdb, 0xef),
    Rgb(0x6b, 0xae, 0xd6),
    Rgb(0x21, 0x71, 0xb5),
    Rgb(0x08, 0x30, 0x6b),
];

impl Palette {
    /// The colour of `value` when the scale runs to `range` (±range for diverging, 0..range for
    /// sequential). Values beyond the range take the end colour.
    pub fn color(self, value: f64, range: f64) -> Rgb {
        let range = if range > 0.0 && range.is_finite() {
            range
        } else {
            1.0
        };
        let t = match self {
            Self::Diverging => (value / range).clamp(-1.0, 1.0) * 0.5 + 0.5,
            Self::Sequential => (value / range).clamp(0.0, 1.0),
        };
        let t = if t.is_nan() { 0.5 } else { t };
        let stops = match self {
            Self::Diverging => &PU_OR,
            Self::Sequential => &BLUES,
        };
        let scaled = t * (stops.len() - 1) as f64;
        let i = (scaled.floor() as usize).min(stops.len() - 2);
        stops[i].mix(stops[i + 1], scaled - i as f64)
    }

    /// The value range to use for `values`: the largest magnitude (diverging) or the largest
    /// value, at least 1 (sequential, so probabilities keep one scale). Infinities are ignored.
    /// A diverging matrix of zeros alone (a fresh β) keeps the scale −1 … 1, so its colour bar
    /// reads as a scale and its cells take the colour of 0 on it.
    pub fn range_for<'a>(self, values: impl IntoIterator<Item = &'a f64>) -> f64 {
        let finite = values.into_iter().filter(|v| v.is_finite());
        match self {
            Self::Diverging => {
                let largest = finite.fold(0.0, |m: f64, v| m.max(v.abs()));
                if largest > 0.0 {
                    largest
                } else {
                    1.0
                }
            }
            Self::Sequential => finite.fold(1.0, |m: f64, v| m.max(*v)),
        }
    }
}

/// Colours around the heatmap, following the page's light or dark theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Theme {
    /// Canvas background.
    pub background: Rgb,
    /// Labels.
    pub text: Rgb,
    /// Secondary text: axis captions.
    pub muted: Rgb,
    /// Masked cells.
    pub masked: Rgb,
    /// The selected cell's outline and highlighted rows.
    pub accent: Rgb,
}

impl Theme {
    /// For light pages.
    pub const LIGHT: Theme = Theme {
        background: Rgb(0xff, 0xff, 0xff),
        text: Rgb(0x1f, 0x23, 0x28),
        muted: Rgb(0x5b, 0x63, 0x6e),
        masked: Rgb(0xd9, 0xdc, 0xe1),
        accent: Rgb(0x0b, 0x6e, 0x4f),
    };

    /// For dark pages.
    pub const DARK: Theme = Theme {
        background: Rgb(0x16, 0x19, 0x1d),
        text: Rgb(0xe6, 0xe8, 0xeb),
        muted: Rgb(0xa0, 0xa8, 0xb3),
        masked: Rgb(0x3a, 0x3f, 0x47),
        accent: Rgb(0x4c, 0xd6, 0xa4),
    };

    /// Text colour legible on `fill`.
    pub fn text_on(fill: Rgb) -> Rgb {
        if fill.luminance() > 0.35 {
            Rgb(0x11, 0x11, 0x11)
        } else {
            Rgb(0xff, 0xff, 0xff)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_is_centred_on_zero_and_saturates_at_the_ends() {
        assert_eq!(Palette::Diverging.color(0.0, 2.0), PU_OR[2]);
        assert_eq!(Palette::Diverging.color(-2.0, 2.0), PU_OR[0]);
        assert_eq!(Palette::Diverging.color(5.0, 2.0), PU_OR[4]);
    }

    #[test]
    fn sequential_runs_light_to_dark() {
        let light = Palette::Sequential.color(0.0, 1.0);
        let dark = Palette::Sequential.color(1.0, 1.0);
        assert!(light.luminance() > 0.9 && dark.luminance() < 0.1);
    }

    #[test]
    fn text_is_legible_on_both_ends() {
        assert_eq!(Theme::text_on(BLUES[0]), Rgb(0x11, 0x11, 0x11));
        assert_eq!(Theme::text_on(BLUES[4]), Rgb(0xff, 0xff, 0xff));
    }

    #[test]
    fn a_matrix_of_zeros_keeps_a_readable_scale() {
        assert_eq!(Palette::Diverging.range_for(&[0.0, -0.0, 0.0]), 1.0);
        assert_eq!(Palette::Diverging.range_for(&[0.0, -0.25]), 0.25);
    }

    #[test]
    fn ranges_ignore_infinities() {
        let v = [f64::NEG_INFINITY, -3.0, 2.0];
        assert_eq!(Palette::Diverging.range_for(&v), 3.0);
        assert_eq!(Palette::Sequential.range_for(&[0.2, 0.5]), 1.0);
    }
}
