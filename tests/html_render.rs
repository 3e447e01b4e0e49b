//! The HTML page as a person sees it: headless Chromium lays out the `report` and
//! `compare` pages at 1280 and 390 px wide, and the test fails on a console message
//! (the page has no JavaScript, so any is an error), on content wider than the
//! viewport, on a chart's text that sticks out of its chart (clipped), on chart
//! text smaller than 11 px, or on a table wider than its box without a cue that
//! it scrolls. Screenshots at both widths are left in `target/tmp/html-render/` to
//! look at.
//!
//! Headless Chromium will not make its window narrower than 500 px, so the page is
//! measured inside iframes of each width, on a harness page that the test writes
//! (the page itself stays free of scripts). Without Chromium the test is skipped,
//! unless `CI=true`.

mod common;

use common::{tempdir, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const WIDTHS: [u32; 2] = [1280, 390];
/// The smallest text of a chart, in CSS pixels as shown.
const SMALLEST_TEXT: f64 = 11.0;
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

/// Chromium on the PATH, or None when the test may be skipped.
fn chromium(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("chromium"))
            .find(|c| c.exists())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: chromium is not installed, and CI must run this test (.ci/run installs it)"
        );
        eprintln!("SKIPPED {test}: chromium is not installed");
    }
    found
}

/// Chromium's output and stderr for `args` (plus the usual headless flags).
fn run_chromium(chromium: &Path, profile: &Path, args: &[&str]) -> (String, String) {
    let out = assert_cmd::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .timeout(CHROMIUM_TIMEOUT)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        text(&out.stderr)
    );
    (text(&out.stdout), text(&out.stderr))
}

/// What the harness measured in the iframe of one width.
#[derive(Debug)]
struct Layout {
    width: f64,
    scroll_width: f64,
    svgs: u64,
    /// Elements that stick out of the viewport (outermost first), when any.
    wide: Vec<String>,
    /// Text of a chart that sticks out of its chart's box.
    clipped: Vec<String>,
    /// The smallest text of any chart, in CSS pixels as shown.
    chart_text: f64,
    /// Tables wider than their box that show no cue that more is to the side.
    hidden_columns: Vec<String>,
}

/// Lays `page` out at each of [`WIDTHS`] and returns the layouts and Chromium's
/// console messages.
fn measure(chromium: &Path, dir: &Path, page: &str) -> (Vec<Layout>, Vec<String>) {
    let srcdoc = page.replace('&', "&amp;").replace('"', "&quot;");
    let frames: String = WIDTHS
        .iter()
        .map(|w| {
            format!(
                "<iframe data-width=\"{w}\" style=\"display:block;width:{w}px;height:2000px;\
                 border:0\" srcdoc=\"{srcdoc}\"></iframe>\n"
            )
        })
        .collect();
    let harness = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\">\n{frames}<pre id=\"probe\"></pre>\n\
         <script>{MEASURE}</script></body></html>\n"
    );
    let path = dir.join("harness.html");
    std::fs::write(&path, harness).unwrap();
    let (dom, stderr) = run_chromium(
        chromium,
        &dir.join("profile"),
        &[
            "--window-size=1500,2000",
            "--virtual-time-budget=5000",
            "--dump-dom",
            &format!("file://{}", path.display()),
        ],
    );
    let probe = dom
        .split_once("<pre id=\"probe\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(json, _)| unescape(json))
        .unwrap_or_default();
    let measured: Value = serde_json::from_str(&probe)
        .unwrap_or_else(|e| panic!("no measurement from the harness ({e}): {dom}"));
    let layouts = measured
        .as_array()
        .expect("one layout per width")
        .iter()
        .map(|l| Layout {
            width: l["width"].as_f64().unwrap(),
            scroll_width: l["scroll"].as_f64().unwrap(),
            svgs: l["svgs"].as_u64().unwrap(),
            wide: strings(&l["wide"]),
            clipped: strings(&l["clipped"]),
            chart_text: l["chartText"].as_f64().unwrap_or(f64::INFINITY),
            hidden_columns: strings(&l["hiddenColumns"]),
        })
        .collect();
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(String::from)
        .collect();
    (layouts, console)
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

/// Run on the harness page once every iframe has loaded (the page's own `load`,
/// which waits for its frames: a frame's own `load` may fire before this script
/// listens, and was then missed): per width, the viewport,
/// the page's scroll width, its charts, the outermost elements that stick out,
/// the charts' text outside its chart, the charts' smallest text, and the
/// tables wider than their box without a scroll cue.
///
/// A chart is its `figure`: text of an SVG must lie within that SVG's box (what
/// lies outside is clipped), and any text within the figure's box. A scroll cue
/// is a shadow that scrolls with the box (a background attached to the box, and
/// one to its content that covers it at the end), or an element that says so.
const MEASURE: &str = r#"
const frames = [...document.querySelectorAll('iframe')];
function measure() {
  const out = frames.map(f => {
    const w = f.contentWindow, d = f.contentDocument;
    const sticksOut = e => e.getBoundingClientRect().right > w.innerWidth + 0.5;
    const name = e => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined
      ? '.' + e.className : '') + ' "' + (e.textContent || '').trim().slice(0, 60) + '"';
    const wide = [...d.body.querySelectorAll('*')]
      .filter(e => sticksOut(e) && !sticksOut(e.parentElement))
      .slice(0, 8)
      .map(name);
    const outside = (r, box) => r.left < box.left - 1 || r.right > box.right + 1 ||
      r.top < box.top - 1 || r.bottom > box.bottom + 1;
    const px = r => `[${Math.round(r.left)}..${Math.round(r.right)}, ` +
      `${Math.round(r.top)}..${Math.round(r.bottom)}]`;
    const clipped = [];
    d.querySelectorAll('svg').forEach((svg, i) => {
      const box = svg.getBoundingClientRect();
      svg.querySelectorAll('text').forEach(t => {
        const r = t.getBoundingClientRect();
        if (t.textContent.trim() && r.width > 0 && outside(r, box))
          clipped.push(`svg ${i} ${name(t)} at ${px(r)} outside ${px(box)}`);
      });
    });
    // Elements that hold text themselves, and the size it is shown at.
    const texts = root => [...root.querySelectorAll('*')].filter(e =>
      [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
    const shown = e => {
      const size = parseFloat(w.getComputedStyle(e).fontSize);
      const ctm = e.getScreenCTM ? e.getScreenCTM() : null;
      return ctm ? size * Math.hypot(ctm.a, ctm.b) : size;
    };
    const sizes = [...d.querySelectorAll('figure')].flatMap(f => texts(f).map(shown));
    const chartText = sizes.length ? Math.min(...sizes) : null;
    const hiddenColumns = [...d.querySelectorAll('table')].filter(table => {
      const box = table.parentElement;
      if (box.scrollWidth <= box.clientWidth + 1) return false;
      const style = w.getComputedStyle(box);
      const scrolls = ['auto', 'scroll'].includes(style.overflowX);
      const shadow = style.backgroundImage.includes('gradient') &&
        style.backgroundAttachment.includes('local') &&
        style.backgroundAttachment.includes('scroll');
      const said = box.querySelector('.more-columns') !== null;
      return !(scrolls && (shadow || said));
    }).map(name);
    return {width: w.innerWidth, scroll: d.documentElement.scrollWidth,
            svgs: d.querySelectorAll('svg').length, wide, clipped, chartText,
            hiddenColumns};
  });
  document.getElementById('probe').textContent = JSON.stringify(out);
}
window.addEventListener('load', measure);
"#;

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// A page of sockbench's, from the fixtures.
fn page(args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("sockbench")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .assert()
        .success();
    text(&out.get_output().stdout)
}

/// Screenshots of `page` at every width, for a person to look at.
fn screenshots(chromium: &Path, dir: &Path, name: &str, page: &str) {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-render");
    std::fs::create_dir_all(&shots).unwrap();
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, page).unwrap();
    for width in WIDTHS {
        let png = shots.join(format!("{name}-{width}.png"));
        run_chromium(
            chromium,
            &dir.join("profile"),
            &[
                &format!("--window-size={width},6000"),
                &format!("--screenshot={}", png.display()),
                &format!("file://{}", path.display()),
            ],
        );
        assert!(png.metadata().is_ok_and(|m| m.len() > 10_000), "{png:?}");
        eprintln!("screenshot: {}", png.display());
    }
}

/// Checks a page at every width: nothing wider than the viewport, no console
/// message, and at least `svgs` charts drawn.
fn check(chromium: &Path, name: &str, page: &str, svgs: u64) {
    let tmp = tempdir();
    let (layouts, console) = measure(chromium, tmp.path(), page);
    assert!(console.is_empty(), "{name}: console messages: {console:#?}");
    assert_eq!(layouts.len(), WIDTHS.len());
    for (layout, width) in layouts.iter().zip(WIDTHS) {
        assert_eq!(layout.width, width as f64, "{name}: {layout:?}");
        assert!(
            layout.scroll_width <= layout.width,
            "{name} at {width} px is {} px wide; sticking out: {:#?}",
            layout.scroll_width,
            layout.wide
        );
        assert!(layout.svgs >= svgs, "{name}: {layout:?}");
        assert!(
            layout.clipped.is_empty(),
            "{name} at {width} px: chart text clipped: {:#?}",
            layout.clipped
        );
        assert!(
            layout.chart_text >= SMALLEST_TEXT,
            "{name} at {width} px: chart text shown at {:.1} px",
            layout.chart_text
        );
        assert!(
            layout.hidden_columns.is_empty(),
            "{name} at {width} px: tables wider than their box, without a cue: {:#?}",
            layout.hidden_columns
        );
    }
    screenshots(chromium, tmp.path(), name, page);
}

#[test]
fn the_report_page_fits_a_desktop_and_a_phone() {
    let Some(chromium) = chromium("the_report_page_fits_a_desktop_and_a_phone") else {
        return;
    };
    let report = page(&["report", "tests/fixtures/run.json", "--format", "html"]);
    check(&chromium, "report", &report, 10);
}

#[test]
fn the_page_of_a_placed_run_fits_a_desktop_and_a_phone() {
    let Some(chromium) = chromium("the_page_of_a_placed_run_fits_a_desktop_and_a_phone") else {
        return;
    };
    // Longer labels: every kind of work is named with its placement.
    let placed = page(&["report", "tests/fixtures/placed.json", "--format", "html"]);
    check(&chromium, "placed", &placed, 3);
}

#[test]
fn the_compare_page_fits_a_desktop_and_a_phone() {
    let Some(chromium) = chromium("the_compare_page_fits_a_desktop_and_a_phone") else {
        return;
    };
    let compare = page(&[
        "compare",
        "tests/fixtures/run.json",
        "tests/fixtures/sockets.json",
        "--format",
        "html",
    ]);
    check(&chromium, "compare", &compare, 3);
}

#[test]
fn the_measurement_sees_a_page_too_wide_and_a_console_error() {
    let Some(chromium) = chromium("the_measurement_sees_a_page_too_wide_and_a_console_error")
    else {
        return;
    };
    let tmp = tempdir();
    let wide = "<!DOCTYPE html><html><body><p>fits</p>\
                <table><tr><td>a_very_long_unbreakable_cell_"
        .to_string()
        + &"x".repeat(300)
        + "</td></tr></table><script>console.error('boom')</script>\
           </body></html>";
    let (layouts, console) = measure(&chromium, tmp.path(), &wide);
    assert!(
        layouts.iter().all(|l| l.scroll_width > l.width),
        "{layouts:?}"
    );
    assert!(
        layouts[1].wide.iter().any(|w| w.starts_with("table")),
        "{layouts:?}"
    );
    assert!(console.iter().any(|l| l.contains("boom")), "{console:?}");
}

#[test]
fn the_measurement_sees_clipped_chart_text_small_text_and_hidden_columns() {
    let Some(chromium) =
        chromium("the_measurement_sees_clipped_chart_text_small_text_and_hidden_columns")
    else {
        return;
    };
    let tmp = tempdir();
    let cell = "<td>a wide cell of a table</td>".repeat(60);
    // A chart whose label runs out of it, drawn 1000 units wide (so its text
    // shrinks on a phone), and a table that scrolls in a plain box.
    let page = format!(
        "<!DOCTYPE html><html><body><figure><svg viewBox=\"0 0 1000 100\" \
         style=\"width:100%\"><text x=\"900\" y=\"50\" font-size=\"20\">\
         a label too long for its chart</text></svg></figure>\
         <div style=\"overflow-x:auto\"><table><tr>{cell}</tr></table></div>\
         </body></html>"
    );
    let (layouts, console) = measure(&chromium, tmp.path(), &page);
    assert!(console.is_empty(), "{console:?}");
    for layout in &layouts {
        assert!(
            layout
                .clipped
                .iter()
                .any(|c| c.contains("a label too long")),
            "{layout:?}"
        );
        assert_eq!(layout.hidden_columns.len(), 1, "{layout:?}");
    }
    // 20 units of 1000 on a phone: about 7 px.
    assert!(layouts[1].chart_text < SMALLEST_TEXT, "{layouts:?}");
}

/// Where `needle` first is in `page`, or a failure naming it.
fn at(page: &str, needle: &str) -> usize {
    page.find(needle)
        .unwrap_or_else(|| panic!("no {needle:?} in the page"))
}

#[test]
fn the_page_reads_from_the_verdict_to_the_system_facts() {
    let report = page(&["report", "tests/fixtures/run.json", "--format", "html"]);
    assert!(
        report.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
    );
    let order = [
        "<h1>sockbench results</h1>",
        "<ul class=\"verdict\">",
        "<strong>Extra time per operation over unix (TLS over tcp), 95% intervals</strong>",
        "<h3>sockets.connect",
        "<h3>postgres.rows",
        "<div class=\"legend\">",
        "<h3>system</h3>",
    ];
    let places: Vec<usize> = order.iter().map(|n| at(&report, n)).collect();
    assert!(
        places.windows(2).all(|p| p[0] < p[1]),
        "out of order: {order:?} at {places:?}"
    );
    assert_eq!(
        report.matches("<table").count(),
        report.matches("<div class=\"table\">\n<table").count(),
        "every table in a box that scrolls"
    );
    // The summary has a line per kind of work in the verdict.
    let summary = &report[places[2]..places[3]];
    for what in ["Short queries", "New raw socket connections", "Bulk bytes"] {
        assert!(summary.contains(what), "{what} not in the summary");
    }
    // Chart titles are words, not field names (`rtt_ns.p50`) or experiment ids.
    let titles: Vec<&str> = report
        .split("<figcaption><strong>")
        .skip(1)
        .filter_map(|t| t.split_once("</strong>").map(|(title, _)| title))
        .collect();
    assert!(titles.len() >= 10, "{titles:?}");
    for title in titles {
        for field in ["_ns", "_per_s", ".p50", "sockets.", "postgres."] {
            assert!(!title.contains(field), "a chart titled {title:?}");
        }
    }
}
