//! The page's files: from a built site's directory (`dist/`, by scripts/build-web.sh), or
//! carried in the binary when it was built with `--features embed-site` after the site.

use super::http::Response;
use std::path::{Path, PathBuf};

pub enum Site {
    Dir(PathBuf),
    #[cfg(feature = "embed-site")]
    Embedded(&'static include_dir::Dir<'static>),
}

#[cfg(feature = "embed-site")]
static EMBEDDED: include_dir::Dir<'static> = include_dir::include_dir!("$CARGO_MANIFEST_DIR/dist");

impl Site {
    /// The site carried in the binary, if it was built with one.
    pub fn embedded() -> Option<Site> {
        #[cfg(feature = "embed-site")]
        return Some(Site::Embedded(&EMBEDDED));
        #[cfg(not(feature = "embed-site"))]
        None
    }

    /// A built site's directory: it must hold index.html and the page's wasm bindings.
    pub fn dir(path: &Path) -> Result<Site, String> {
        if path.join("index.html").is_file() && path.join("pkg").is_dir() {
            Ok(Site::Dir(path.to_path_buf()))
        } else {
            Err(format!(
                "{} is not a built site (no index.html and pkg/ in it): build it with scripts/build-web.sh (writes dist/), \
                 or build tracesight with `--features embed-site` after that to carry it",
                path.display()
            ))
        }
    }

    pub fn get(&self, rel: &str) -> Response {
        if rel.split('/').any(|p| p == ".." || p.is_empty()) || rel.contains('\\') {
            return Response::text(403, "not a file of the site");
        }
        let kind = content_type(rel);
        match self {
            Site::Dir(root) => {
                Response::file(&root.join(rel), kind).unwrap_or_else(|_| Response::text(404, "not a file of the site"))
            }
            #[cfg(feature = "embed-site")]
            Site::Embedded(d) => match d.get_file(rel) {
                Some(f) => Response::bytes(200, kind, f.contents().to_vec()),
                None => Response::text(404, "not a file of the site"),
            },
        }
    }
}

fn content_type(rel: &str) -> &'static str {
    match rel.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        // Streaming compilation needs the right type.
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}
