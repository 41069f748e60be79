//! Saving files from the page and reading files into it, without any server.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Offers `text` as a file called `filename`.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser could not create the file".to_string())?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)
        .map_err(|_| "the browser could not create a link to the file".to_string())?;
    let result = download_url(filename, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
    result
}

/// Offers the resource at `url` (a `data:` or `blob:` URL) as a file called `filename`.
pub fn download_url(filename: &str, url: &str) -> Result<(), String> {
    let anchor = document()
        .create_element("a")
        .map_err(|_| "the browser could not start the download".to_string())?
        .unchecked_into::<web_sys::HtmlAnchorElement>();
    anchor.set_href(url);
    anchor.set_download(filename);
    anchor.set_attribute("hidden", "").ok();
    let body = document().body().ok_or("the page has no body")?;
    body.append_child(&anchor).ok();
    anchor.click();
    anchor.remove();
    Ok(())
}

/// A file name from free text: letters, digits and dashes only.
pub fn file_stem(text: &str) -> String {
    let mut stem = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.len() >= 40 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-').to_string();
    if stem.is_empty() {
        "attention".to_string()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_keep_only_safe_characters() {
        assert_eq!(file_stem("I am hungry"), "i-am-hungry");
        assert_eq!(
            file_stem("<script>alert(1)</script>"),
            "script-alert-1-script"
        );
        assert_eq!(file_stem("😀😀"), "attention");
        assert!(file_stem(&"a b ".repeat(100)).len() <= 40);
    }
}
