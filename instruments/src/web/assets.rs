//! The page's files, embedded in the binary (no CDN: the page works offline and through an ssh
//! tunnel): the HTML, its script (which draws the charts as SVG itself) and its style.

/// The page's script.
pub(crate) const APP_JS: &str = include_str!("page/app.js");
/// The page's style.
pub(crate) const APP_CSS: &str = include_str!("page/app.css");
const INDEX_HTML: &str = include_str!("page/index.html");

/// The page, with the run's stop token (hex digits; empty when the page may not stop the run).
pub(crate) fn page(token: &str) -> String {
    debug_assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    INDEX_HTML.replace("{{TOKEN}}", token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_the_token_and_links_its_assets() {
        let page = page("00ff");
        assert!(page.contains(r#"<meta name="giving-token" content="00ff">"#));
        assert!(page.contains(r#"src="app.js""#) && page.contains(r#"href="app.css""#));
        assert!(!page.contains("http"), "no asset from elsewhere");
    }
}
