//! `kconform run --html FILE`: the page holds the causes, the two answers of each differing
//! step side by side with the field marked, the request and the repro command; in a real
//! browser (Debian's headless Chromium, which CI installs) it renders with its script run and
//! no script error, the causes open, and a screenshot is kept in the test's target directory.

use std::path::Path;
use std::process::Command;

/// The browser, if this machine has one.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// The page's DOM after its script ran (`--dump-dom`), with every cause opened.
fn rendered(browser: &str, page: &Path) -> String {
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}#open-all", page.display()))
        .output()
        .expect("the browser runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts that a kconform page renders in the browser with its script run and no script
/// error, every section opened; the DOM it rendered (none, saying why, without a browser).
pub fn renders(page: &Path) -> Option<String> {
    let Some(browser) = chromium() else {
        println!("skipped rendering {}: no chromium here", page.display());
        return None;
    };
    let dom = rendered(browser, &page.canonicalize().unwrap());
    assert!(
        dom.contains("data-ready=\"1\""),
        "the script did not run:\n{dom}"
    );
    assert!(!dom.contains("data-error"), "a script error:\n{dom}");
    Some(dom)
}

/// A screenshot of `page` with every section open, kept in the tests' target directory as
/// `NAME.png` for a person to look at (nothing without a browser).
pub fn screenshot(page: &Path, name: &str) {
    let Some(browser) = chromium() else {
        return;
    };
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png"));
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(["--window-size=1400,1800"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!(
            "file://{}#open-all",
            page.canonicalize().unwrap().display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success() && shot.exists(), "no screenshot");
    println!("screenshot: {}", shot.display());
}

#[test]
fn the_html_report_shows_each_cause_with_both_answers_and_renders_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let run = Command::new(env!("CARGO_BIN_EXE_kconform"))
        .args(["run", "end-txn-on-empty", "add-offsets-empty-group"])
        .args(["--target", "ref", "--target", "apache-recorded", "--html"])
        .arg(&page)
        .output()
        .expect("kconform runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
    for want in [
        "EndTxn error_code: 50 INVALID_TRANSACTION_TIMEOUT | 48 INVALID_TXN_STATE",
        "documented by <code>invalid-transition-wire-50</code>",
        "<mark>    &quot;error_code&quot;: &quot;48 INVALID_TXN_STATE&quot;,</mark>",
        "<mark>    &quot;error_code&quot;: &quot;50 INVALID_TRANSACTION_TIMEOUT&quot;,</mark>",
        "kconform repro end-txn-on-empty --target ref --target apache-recorded",
        "request sent",
        "Coverage: API × version × error code",
    ] {
        assert!(html.contains(want), "{want} not in the page");
    }

    // The browser half (skipped, saying why, without a browser; ci/test.sh installs Debian's).
    let Some(dom) = renders(&page) else {
        return;
    };
    let browser = chromium().expect("renders found a browser");
    assert!(
        dom.contains("<details class=\"cause documented\" open=\"\">"),
        "causes open"
    );
    screenshot(&page, "kconform-html-report");

    // Seen failing: a script error on the page is caught.
    let broken = dir.path().join("broken.html");
    std::fs::write(
        &broken,
        html.replace("</body>", "<script>no_such_function()</script></body>"),
    )
    .unwrap();
    assert!(
        rendered(browser, &broken).contains("data-error="),
        "a planted error is caught"
    );
}

/// `kconform certify --html FILE`: the judges' table, the findings, and the scenarios' own page
/// within it, in the shell every page shares; it renders in the browser with its script run.
#[test]
fn the_certificate_page_holds_each_judges_page_and_renders_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("certificate.html");
    let run = Command::new(env!("CARGO_BIN_EXE_kconform"))
        .current_dir(dir.path())
        .args(["certify", "--target", "ref", "--against", "apache-recorded"])
        .args(["--judge", "scenarios", "--html"])
        .arg(&page)
        .output()
        .expect("kconform runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
    for want in [
        "<h1>kconform: <span class=\"good\">certify PASSED</span></h1>",
        "<td><a href=\"#scenarios\">scenarios</a></td><td class=\"good\">PASSED</td>",
        "<td><a href=\"#chaos\">chaos</a></td><td class=\"dim\">left out</td>",
        "<details id=\"scenarios\"><summary>scenarios: PASSED</summary><iframe srcdoc=\"&lt;!doctype html&gt;",
        // The scenarios' own page, escaped inside the frame.
        "EndTxn error_code: 50 INVALID_TRANSACTION_TIMEOUT | 48 INVALID_TXN_STATE",
    ] {
        assert!(html.contains(want), "{want} not in the page");
    }
    let Some(dom) = renders(&page) else {
        return;
    };
    assert!(
        dom.contains("<details id=\"scenarios\" open=\"\">"),
        "judges open"
    );
    screenshot(&page, "kconform-certificate");
}

/// A page of the book, as a reader's browser shows it: the ledger chapter (built by `mdbook
/// build docs`, which CI runs before the tests) renders with its entries and their anchors.
#[test]
fn the_books_ledger_chapter_renders_in_a_browser() {
    let page = crate::util::root().join("docs/book/ledger.html");
    if !page.exists() {
        println!("skipped: docs/book is not built (`mdbook build docs`; CI builds it first)");
        return;
    }
    let Some(browser) = chromium() else {
        println!("skipped: no chromium here (ci/test.sh installs Debian's)");
        return;
    };
    let page = page.canonicalize().unwrap();
    let dom = rendered(browser, &page);
    assert!(dom.contains("The deviation ledger"), "{dom}");
    assert!(
        dom.contains("id=\"invalid-transition-wire-50\""),
        "an entry's anchor"
    );
    assert!(
        dom.contains("href=\"scenarios.html#end-txn-on-empty\""),
        "a scenario link"
    );
}
