//! The page address around the share link: the query-string options of a page
//! (`?embed=1&stage=softmax&controls=0&theme=dark&present=1&quiz=1`), the full-view address of an
//! embed and the iframe code a blogger pastes.

use crate::attention::Stage;

/// Options from the query string (`?embed=1&stage=softmax&controls=0&theme=dark&present=1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageOptions {
    /// A compact view for iframes.
    pub embed: bool,
    /// Show the editors (default on; `controls=0` hides them).
    pub controls: bool,
    /// The stage to open on, overriding the link's.
    pub stage: Option<Stage>,
    /// `Some(true)` dark, `Some(false)` light, `None` follow the system.
    pub dark: Option<bool>,
    /// Start in presenter mode.
    pub present: bool,
    /// Start with the quiz on, as `quiz=1` in the link does.
    pub quiz: bool,
    /// An embed that trains (`train=1`): the training view, the head and the loss curve with
    /// the training settings and buttons, below its stage.
    pub train: bool,
}

/// The page's options a share link's fragment may carry too (`#…&present=1`), as people write
/// them there: the link's reader passes over them. The others are the link's own keys there.
pub const FRAGMENT_OPTIONS: [&str; 4] = ["present", "embed", "controls", "theme"];

/// The key of an address's `key=value` pair (the whole pair when it has no `=`).
fn key_of(pair: &str) -> &str {
    pair.split_once('=').map_or(pair, |(k, _)| k)
}

/// Reads the query string (with or without the leading `?`); unknown or bad values are ignored.
pub fn parse_query(search: &str) -> PageOptions {
    parse_address(search, "")
}

/// Reads the page's options from its query string and, for [`FRAGMENT_OPTIONS`], its fragment
/// (each with or without its leading `?` or `#`), the fragment's last.
pub fn parse_address(search: &str, fragment: &str) -> PageOptions {
    let mut options = PageOptions {
        controls: true,
        ..PageOptions::default()
    };
    let from_fragment = fragment
        .trim_start_matches('#')
        .split('&')
        .filter(|pair| FRAGMENT_OPTIONS.contains(&key_of(pair)));
    for pair in search
        .trim_start_matches('?')
        .split('&')
        .chain(from_fragment)
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let on = matches!(value, "1" | "true" | "yes" | "on" | "");
        match key {
            "embed" => options.embed = on,
            "present" => options.present = on,
            "quiz" => options.quiz = on,
            "train" => options.train = on,
            "controls" => options.controls = on,
            "stage" => options.stage = Stage::from_key(value),
            "theme" => {
                options.dark = match value {
                    "dark" => Some(true),
                    "light" => Some(false),
                    _ => None,
                }
            }
            _ => {}
        }
    }
    options
}

/// The query string `search` without the option `key` (its `?` kept only while an option is
/// left): a page that left presenter mode drops `present=1`, so a reload does not start it again.
pub fn without_option(search: &str, key: &str) -> String {
    let kept: Vec<&str> = search
        .trim_start_matches('?')
        .split('&')
        .filter(|pair| !pair.is_empty() && key_of(pair) != key)
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    }
}

/// The page address without query and fragment, e.g. `https://host/path/`.
fn base_of(href: &str) -> &str {
    let end = href.find(['?', '#']).unwrap_or(href.len());
    href.get(..end).unwrap_or(href)
}

/// The full view of the same state: no embed options, same fragment.
pub fn full_view_url(href: &str, fragment: &str) -> String {
    format!("{}#{fragment}", base_of(href))
}

/// The script pasted after the iframe: it sets the frame's height to the height the page
/// reports (a number of CSS pixels, within sane bounds), for frames of this app only, and after
/// a step to another stage scrolls the frame's top into view if it is above the window.
const AUTO_HEIGHT_SCRIPT: &str = "<script>addEventListener(\"message\", function (e) { \
var h = e.data && e.data.type === \"attention-lens:height\" ? Number(e.data.height) : NaN; \
if (!(h > 0 && h < 20000)) return; \
document.querySelectorAll(\"iframe.attention-lens\").forEach(function (f) { \
if (f.contentWindow !== e.source) return; f.style.height = Math.ceil(h) + \"px\"; \
var top = f.getBoundingClientRect().top; if (e.data.step === true && top < 0) scrollBy(0, top); }); });</script>";

/// How an embed opens, as sharing sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedOptions {
    /// The sentence, settings and matrices beside the stage (otherwise compact: one stage and
    /// one head at a time, Previous and Next).
    pub editors: bool,
    /// The colour scheme: `None` follows the reader's.
    pub dark: Option<bool>,
    /// Opens in quiz mode, each stage's result behind a question.
    pub quiz: bool,
    /// Keeps the picked cell picked, its explanation open.
    pub cell: bool,
    /// Opens at the first stage rather than the one on screen.
    pub from_start: bool,
    /// With the training view below the stage: the trained head beside the loss curve.
    pub train: bool,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            editors: false,
            dark: None,
            quiz: false,
            cell: true,
            from_start: false,
            train: false,
        }
    }
}

/// The state `fragment` with the pairs `options` leave out.
fn embed_fragment(fragment: &str, options: &EmbedOptions) -> String {
    fragment
        .split('&')
        .filter(|pair| {
            let key = key_of(pair);
            !(key == "cell" && (!options.cell || options.from_start)
                || key == "stage" && options.from_start)
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// The address an embed of the state `fragment` loads, as `options` set it.
pub fn embed_src(href: &str, fragment: &str, options: &EmbedOptions) -> String {
    let mut query = String::from("?embed=1");
    if !options.editors {
        query.push_str("&controls=0");
    }
    match options.dark {
        Some(true) => query.push_str("&theme=dark"),
        Some(false) => query.push_str("&theme=light"),
        None => {}
    }
    if options.quiz {
        query.push_str("&quiz=1");
    }
    if options.train {
        query.push_str("&train=1");
    }
    format!(
        "{}{query}#{}",
        base_of(href),
        embed_fragment(fragment, options)
    )
}

/// What a blogger pastes to embed the current state: an iframe and the script that fits its
/// height to the content. By default the embed is compact (`controls=0`: no editors, one stage
/// and one head at a time, Previous and Next); see [`EmbedOptions`] for the rest.
pub fn embed_code(href: &str, fragment: &str, options: &EmbedOptions) -> String {
    let src = embed_src(href, fragment, options)
        .replace('&', "&amp;")
        .replace('"', "&quot;");
    // Before the script runs (or where scripts are stripped), a height that shows the picture.
    let height = match (options.editors, options.train) {
        (_, true) => 1100,
        (true, false) => 720,
        (false, false) => 600,
    };
    format!(
        "<iframe class=\"attention-lens\" src=\"{src}\" \
         title=\"attention-lens: multi-head self-attention\" \
         style=\"width: 100%; height: {height}px; border: 0\" loading=\"lazy\"></iframe>\n\
         {AUTO_HEIGHT_SCRIPT}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_is_dropped_from_the_query_string_and_the_rest_kept() {
        assert_eq!(without_option("?present=1", "present"), "");
        assert_eq!(without_option("?present=1&quiz=1", "present"), "?quiz=1");
        assert_eq!(
            without_option("?theme=dark&present", "present"),
            "?theme=dark"
        );
        assert_eq!(
            without_option("?presenter=1&quiz=1", "present"),
            "?presenter=1&quiz=1"
        );
        assert_eq!(without_option("", "present"), "");
    }

    #[test]
    fn the_query_string_sets_embed_stage_controls_and_theme() {
        let o = parse_query("?embed=1&stage=softmax&controls=0&theme=dark");
        assert!(o.embed && !o.controls && !o.present);
        assert_eq!(o.stage, Some(Stage::Softmax));
        assert_eq!(o.dark, Some(true));
        let plain = parse_query("");
        assert!(!plain.embed && plain.controls && plain.dark.is_none());
    }

    #[test]
    fn the_fragment_may_start_presenter_mode_but_keeps_its_own_keys() {
        let o = parse_address("", "#v=1&s=I%20am&present=1&quiz=1&stage=mask&theme=dark");
        assert!(o.present && !o.quiz && o.stage.is_none());
        assert_eq!(o.dark, Some(true));
        assert!(parse_address("?present=1", "#present=0").controls);
        assert!(!parse_address("?present=1", "#present=0").present);
        assert!(!parse_address("", "#v=1&train=1").train);
    }

    #[test]
    fn hostile_query_values_are_ignored() {
        let o = parse_query("?stage=<script>alert(1)</script>&theme=%22%3E&embed=maybe");
        assert_eq!(o.stage, None);
        assert_eq!(o.dark, None);
        assert!(!o.embed);
    }

    #[test]
    fn links_keep_the_state_and_drop_the_embed_options() {
        let href = "http://127.0.0.1:8080/sub/?embed=1&controls=0#v=1&s=a";
        assert_eq!(
            full_view_url(href, "v=1&s=a"),
            "http://127.0.0.1:8080/sub/#v=1&s=a"
        );
        let editors = EmbedOptions {
            editors: true,
            ..EmbedOptions::default()
        };
        let code = embed_code(href, "v=1&s=a", &editors);
        assert!(code.contains(" src=\"http://127.0.0.1:8080/sub/?embed=1#v=1&amp;s=a\""));
        assert!(!code.contains("controls"));
    }

    #[test]
    fn the_embed_code_is_compact_by_default_and_sizes_its_frame() {
        let code = embed_code(
            "https://a.example/lens/",
            "v=1&stage=mask",
            &EmbedOptions::default(),
        );
        assert!(code.starts_with("<iframe class=\"attention-lens\" src=\"https://a.example/lens/?embed=1&amp;controls=0#v=1&amp;stage=mask\""));
        assert!(code.contains("height: 600px"));
        let (frame, script) = code.split_once('\n').unwrap();
        assert!(frame.ends_with("</iframe>"));
        assert!(script.starts_with("<script>") && script.ends_with("</script>"));
        assert!(script.contains("attention-lens:height"));
        assert!(script.contains("f.contentWindow !== e.source"));
        assert!(script.contains("e.data.step === true"));
    }

    #[test]
    fn the_embed_options_set_its_theme_quiz_cell_and_first_stage() {
        let href = "https://a.example/lens/";
        let fragment = "v=1&s=a&stage=softmax&cell=weights-h0.2.0";
        let dark_quiz = EmbedOptions {
            dark: Some(true),
            quiz: true,
            ..EmbedOptions::default()
        };
        assert_eq!(
            embed_src(href, fragment, &dark_quiz),
            "https://a.example/lens/?embed=1&controls=0&theme=dark&quiz=1#v=1&s=a&stage=softmax&cell=weights-h0.2.0"
        );
        let no_cell = EmbedOptions {
            cell: false,
            dark: Some(false),
            ..EmbedOptions::default()
        };
        assert_eq!(
            embed_src(href, fragment, &no_cell),
            "https://a.example/lens/?embed=1&controls=0&theme=light#v=1&s=a&stage=softmax"
        );
        let from_start = EmbedOptions {
            from_start: true,
            ..EmbedOptions::default()
        };
        assert_eq!(
            embed_src(href, fragment, &from_start),
            "https://a.example/lens/?embed=1&controls=0#v=1&s=a"
        );
    }

    #[test]
    fn an_embed_with_the_training_view_asks_for_it_and_starts_taller() {
        let options = EmbedOptions {
            train: true,
            ..EmbedOptions::default()
        };
        let src = embed_src("https://a.example/", "v=1", &options);
        assert_eq!(src, "https://a.example/?embed=1&controls=0&train=1#v=1");
        assert!(parse_query(src.split_once('?').unwrap().1.split('#').next().unwrap()).train);
        assert!(embed_code("https://a.example/", "v=1", &options).contains("height: 1100px"));
        assert!(!parse_query("?embed=1").train);
    }
}
