//! The top bar's menus are `<details>` elements. As menus do, they close when the pointer goes
//! down outside them, on Escape and once one of their actions has been taken; on a phone the open menu is
//! pinned to the window, so it would otherwise stay over the stage as the page scrolls.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Closes every open menu that does not hold `inside`: all of them when it is `None`.
pub fn close_menus(inside: Option<&web_sys::Node>) {
    let Ok(open) = document().query_selector_all("details.menu[open]") else {
        return;
    };
    for i in 0..open.length() {
        let menu = open
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::HtmlDetailsElement>().ok());
        if let Some(menu) = menu.filter(|m| !inside.is_some_and(|n| m.contains(Some(n)))) {
            menu.set_open(false);
        }
    }
}

/// From now on, a press of the pointer outside an open menu closes it.
pub fn close_menus_on_press_outside() {
    let _ = window_event_listener(leptos::ev::pointerdown, |ev| {
        let target = ev.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        close_menus(target.as_ref());
    });
}

/// From now on, Escape closes an open menu and puts the focus back on its summary, as a menu
/// button's menu does.
pub fn close_menus_on_escape() {
    let _ = window_event_listener(leptos::ev::keydown, |ev| {
        if ev.key() != "Escape" {
            return;
        }
        let Ok(Some(open)) = document().query_selector("details.menu[open]") else {
            return;
        };
        ev.prevent_default();
        let summary = open
            .query_selector("summary")
            .ok()
            .flatten()
            .and_then(|s| s.dyn_into::<web_sys::HtmlElement>().ok());
        close_menus(None);
        if let Some(summary) = summary {
            let _ = summary.focus();
        }
    });
}
