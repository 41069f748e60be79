//! One Leptos component per file.
