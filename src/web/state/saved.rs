//! What the page keeps in the browser: the user's bucket rules, in local storage.

const STORAGE_KEY: &str = "tracesight.rules";

/// The rules saved in this browser ("" when none or storage is off).
pub fn saved_rules() -> String {
    storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten()).unwrap_or_default()
}

pub fn save_rules(text: &str) {
    if let Some(s) = storage() {
        let _ = if text.trim().is_empty() { s.remove_item(STORAGE_KEY) } else { s.set_item(STORAGE_KEY, text) };
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}
