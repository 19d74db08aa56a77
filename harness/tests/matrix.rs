//! `kconform matrix`: a brokers file of kaas-ref (its documented ledger), kaas-ref started from
//! its command as a broker that claims no transactions, a broker whose command fails, and
//! nafka (a broker that documents no transactions, from PyPI) give a row each: documented,
//! named for advertising what it denies, could not start, not served. A second run of
//! kaas-ref on a ledger with one entry fewer turns its cell wrong, and its page shows the
//! change. Against Apache's recorded answers and with the scenarios alone, so CI pays seconds.

use std::path::Path;

fn matrix(args: &[&str], dir: &Path) -> (i32, String) {
    let out = crate::util::kconform()
        .arg("matrix")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("kconform runs");
    let text = crate::util::printed(&out);
    (out.status.code().unwrap_or(-1), text)
}

/// The latest run of `broker` in the site's matrix.json, as column → word.
fn words(site: &Path, broker: &str) -> std::collections::BTreeMap<String, String> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(site.join("matrix.json")).unwrap()).unwrap();
    crate::util::assert_follows_schema(include_str!("../matrix.schema.json"), &json);
    let run = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["broker"] == broker)
        .unwrap_or_else(|| panic!("no row for {broker}: {json}"));
    run["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["column"].as_str().unwrap().to_owned(),
                c["word"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn entry(name: &str, body: &str) -> String {
    format!("[[broker]]\nname = \"{name}\"\nversion = \"test\"\n{body}\n\n")
}

#[test]
fn each_broker_gets_a_row_and_a_ledger_change_shows_in_its_history() {
    let Some(kaas_ref) = crate::kaas_build::kaas_ref_bin() else {
        println!("SKIPPED: no kaas-ref binary beside the tests");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = crate::util::root();
    std::fs::copy(
        root.join("matrix/install/nafka.sh"),
        dir.path().join("nafka.sh"),
    )
    .unwrap();
    let brokers = |kaas_ref_ledger: &str| {
        [
            entry(
                "kaas-ref",
                &format!("target = \"ref\"\nledger = \"{kaas_ref_ledger}\"\ntransactions = \"served\""),
            ),
            entry(
                "denies-but-serves",
                &format!(
                    "command = \"{} --listen 127.0.0.1:{{port}} --data-dir {{data_dir}}\"\ntransactions = \"none\"",
                    kaas_ref.display()
                ),
            ),
            entry(
                "broken",
                "command = \"echo no such flag {port} >&2; exit 3\"\ntransactions = \"served\"",
            ),
            entry(
                "nafka",
                "install = \"sh {brokers_dir}/nafka.sh\"\ncommand = \"{install_dir}/venv3.12/bin/python -m nafka --port {port}\"\nready_secs = 30\ntransactions = \"none\"",
            ),
        ]
        .concat()
    };
    let file = dir.path().join("brokers.toml");
    std::fs::write(&file, brokers("built-in")).unwrap();
    let site = dir.path().join("site");
    let args = [
        "--brokers",
        "brokers.toml",
        "--site",
        "site",
        "--against",
        "apache-recorded",
        "--judge",
        "scenarios",
    ];
    let (code, text) = matrix(&args, dir.path());
    println!("{text}");
    assert_eq!(code, 1, "failing cells fail the run: {text}");
    assert_eq!(
        words(&site, "kaas-ref")["scenarios"],
        "documented",
        "{text}"
    );
    let denies = words(&site, "denies-but-serves");
    assert_eq!(denies["transactions"], "undocumented", "{text}");
    assert_eq!(
        denies["scenarios"], "wrong",
        "no ledger: every difference is its own"
    );
    assert_eq!(words(&site, "broken")["start"], "could-not-start");
    assert!(
        text.contains("no such flag"),
        "the start's last line: {text}"
    );
    let nafka = words(&site, "nafka");
    match nafka.get("transactions") {
        Some(word) => assert_eq!(word, "not-served", "{text}"),
        None => println!(
            "SKIPPED: nafka could not be had here ({nafka:?}); the negative control is unseen"
        ),
    }
    // The kaas documentation loses an entry: the same kaas-ref is now wrong, and its page says
    // what changed.
    let ledger = std::fs::read_to_string(root.join("scenarios/deviations.toml")).unwrap();
    let first = ledger.find("[[deviation]]").unwrap();
    let second = first + 1 + ledger[first + 1..].find("[[deviation]]").unwrap();
    let fewer = format!("{}{}", &ledger[..first], &ledger[second..]);
    std::fs::write(dir.path().join("fewer.toml"), fewer).unwrap();
    std::fs::write(&file, brokers("fewer.toml")).unwrap();
    let (code, text) = matrix(&[&args[..], &["--broker", "kaas-ref"]].concat(), dir.path());
    assert_eq!(code, 1, "{text}");
    assert_eq!(words(&site, "kaas-ref")["scenarios"], "wrong", "{text}");
    let page = std::fs::read_to_string(site.join("kaas-ref.html")).unwrap();
    assert!(
        page.contains("<td>scenarios</td><td class=\"w-documented\">documented</td><td class=\"w-wrong\">wrong</td>"),
        "the change on the page: {page}"
    );
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for broker in ["kaas-ref", "denies-but-serves", "broken", "nafka"] {
        assert!(
            index.contains(&format!("<a href=\"{broker}.html\">{broker}</a>")),
            "{broker}"
        );
    }
    if let Some(dom) = crate::html_report::renders(&site.join("index.html")) {
        assert!(
            dom.contains("class=\"cell w-wrong\""),
            "the page renders its cells"
        );
        crate::html_report::screenshot(&site.join("index.html"), "kconform-matrix");
    }
}

/// Every input is checked before a broker starts: a file that is not there, a wrong entry, a
/// name the file lacks and an --against that is no Apache are each refused in one line.
#[test]
fn bad_inputs_are_refused_before_any_broker() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("brokers.toml");
    // (the brokers file, or none; the arguments; the one line that refuses them)
    let cases: [(Option<&str>, &[&str], &str); 4] = [
        (
            None,
            &[],
            "no brokers file here: name one with --brokers FILE",
        ),
        (
            Some("command = \"serve\"\ntransactions = \"served\""),
            &[],
            "broker \"a\": its command must name {port}",
        ),
        (
            Some("target = \"ref\"\ntransactions = \"served\""),
            &["--broker", "b"],
            "no broker named b (it has: a)",
        ),
        (
            Some("target = \"ref\"\ntransactions = \"served\""),
            &["--against", "ref"],
            "--against ref: the matrix judges against Apache",
        ),
    ];
    for (body, args, says) in cases {
        if let Some(body) = body {
            std::fs::write(&file, entry("a", body)).unwrap();
        }
        let (code, text) = matrix(args, dir.path());
        assert_eq!(code, 2, "{text}");
        assert!(text.contains(says), "{says}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "one line: {text}");
    }
    assert!(
        !dir.path().join("kconform-matrix/runs/a").exists(),
        "nothing ran"
    );
}
