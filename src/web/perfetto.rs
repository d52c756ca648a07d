//! "Open in Perfetto": hands the trace file to the Perfetto UI in a new tab of the user's own
//! browser, through its documented window.open + postMessage protocol (PING until the tab
//! answers PONG, then `{perfetto: {buffer, title, fileName}}`). The bytes go from this tab to
//! that one; nothing is uploaded.

use js_sys::{Object, Reflect};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, MessageEvent, Window};

pub const ORIGIN: &str = "https://ui.perfetto.dev";
const PING_MS: i32 = 100;
/// Give up pinging after this long (the tab was closed, or never loaded).
const GIVE_UP_MS: f64 = 60_000.0;

/// Opens the Perfetto UI and sends it `file`. Must run inside the click handler (browsers
/// allow new tabs only on a user's gesture). Returns why it could not open the tab.
pub fn open(file: File) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    let tab = window
        .open_with_url_and_target(ORIGIN, "_blank")
        .ok()
        .flatten()
        .ok_or("the browser blocked the new tab: allow pop-ups for this site and try again")?;
    wasm_bindgen_futures::spawn_local(async move {
        let buffer = match JsFuture::from(file.array_buffer()).await {
            Ok(b) => b,
            Err(_) => return,
        };
        hand_over(window, tab, buffer, file.name());
    });
    Ok(())
}

/// Pings `tab` until it answers, then posts the trace and stops listening.
fn hand_over(window: Window, tab: Window, buffer: JsValue, name: String) {
    let message = Object::new();
    let inner = Object::new();
    let _ = Reflect::set(&inner, &"buffer".into(), &buffer);
    let _ = Reflect::set(&inner, &"title".into(), &format!("{name} (from tracesight)").into());
    let _ = Reflect::set(&inner, &"fileName".into(), &name.into());
    let _ = Reflect::set(&message, &"perfetto".into(), &inner);
    // Taken when posted or given up, so the trace's bytes are not held afterwards (the small
    // listener and timer closures stay: dropping one from inside itself is not allowed).
    let message = Rc::new(RefCell::new(Some(message)));

    // The listener and the timer remove each other.
    type Handles = (Option<Closure<dyn FnMut(MessageEvent)>>, Option<Closure<dyn FnMut()>>, i32);
    let handles: Rc<RefCell<Handles>> = Rc::new(RefCell::new((None, None, 0)));
    let stop = {
        let (window, handles, message) = (window.clone(), handles.clone(), message.clone());
        move || {
            message.borrow_mut().take();
            let (listener, _timer, id) = &*handles.borrow();
            window.clear_interval_with_handle(*id);
            if let Some(l) = listener {
                let _ = window.remove_event_listener_with_callback("message", l.as_ref().unchecked_ref());
            }
        }
    };
    let on_message = {
        let (tab, stop) = (tab.clone(), stop.clone());
        Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            if ev.origin() != ORIGIN || ev.data().as_string().as_deref() != Some("PONG") {
                return;
            }
            let posting = message.borrow_mut().take();
            stop();
            if let Some(m) = posting {
                let _ = tab.post_message(&m, ORIGIN);
            }
        })
    };
    let started = js_sys::Date::now();
    let ping = {
        let tab = tab.clone();
        Closure::<dyn FnMut()>::new(move || {
            if tab.closed().unwrap_or(true) || js_sys::Date::now() - started > GIVE_UP_MS {
                stop();
                return;
            }
            let _ = tab.post_message(&"PING".into(), ORIGIN);
        })
    };
    let _ = window.add_event_listener_with_callback("message", on_message.as_ref().unchecked_ref());
    let id = window
        .set_interval_with_callback_and_timeout_and_arguments_0(ping.as_ref().unchecked_ref(), PING_MS)
        .unwrap_or(0);
    *handles.borrow_mut() = (Some(on_message), Some(ping), id);
}
