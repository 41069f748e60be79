//! The top bar's menus are `<details>` elements. As menus do, they close when the pointer goes
//! down outside them, on Escape and once one of their actions has been taken; on a phone the open menu is
//! pinned to the window, so it would otherwise stay over the stage as the page scrolls.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Closes every open menu that does not hold `inside`: all of them when it is `None`. Says
/// whether it closed any.
pub fn close_menus(inside: Option<&web_sys::Node>) -> bool {
    let Ok(open) = document().query_selector_all("details.menu[open]") else {
        return false;
    };
    let mut closed = false;
    for i in 0..open.length() {
        let menu = open
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::HtmlDetailsElement>().ok());
        if let Some(menu) = menu.filter(|m| !inside.is_some_and(|n| m.contains(Some(n)))) {
            menu.set_open(false);
            closed = true;
        }
    }
    closed
}

/// From now on, a press of the pointer outside an open menu closes it. A tap that closes a menu
/// does nothing else: the click it ends in is dropped, so it picks no cell under the menu, where
/// a finger cannot see what it lands on. A mouse's click goes on to what it points at.
pub fn close_menus_on_press_outside() {
    let swallow = StoredValue::new(false);
    let _ = window_event_listener(leptos::ev::pointerdown, move |ev| {
        let target = ev.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        let closed = close_menus(target.as_ref());
        swallow.set_value(closed && ev.pointer_type() == "touch");
    });
    // In the capture phase on the window, before any element sees the click.
    let on_click =
        wasm_bindgen::closure::Closure::<dyn Fn(web_sys::Event)>::new(move |ev: web_sys::Event| {
            if swallow.get_value() {
                swallow.set_value(false);
                ev.stop_propagation();
                ev.prevent_default();
            }
        });
    let _ = window().add_event_listener_with_callback_and_bool(
        "click",
        on_click.as_ref().unchecked_ref(),
        true,
    );
    // The listener lives as long as the page.
    on_click.forget();
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
