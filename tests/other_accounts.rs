//! sockbench run as root next to another local account that races it: a watcher
//! running as the server account (`postgres`, else `nobody`) plants symbolic links
//! and swaps directories while a run writes and cleans up. Nothing outside the run's
//! own files may change. These tests need root (to be the other account too); run
//! as another user they say so and return.

mod common;

use common::{postgres_installed, run, sockbench, text, KillOnDrop};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The account PostgreSQL runs as when sockbench is root, and the adversary here.
fn other_account(test: &str) -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED {test}: playing another account needs root");
        return None;
    }
    for name in ["postgres", "nobody"] {
        let c = std::ffi::CString::new(name).unwrap();
        // SAFETY: `c` is NUL-terminated and outlives the call; the result is checked.
        let entry = unsafe { libc::getpwnam(c.as_ptr()) };
        if !entry.is_null() {
            // SAFETY: a non-null entry from getpwnam, read at once.
            return Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) });
        }
    }
    eprintln!("SKIPPED {test}: neither a postgres nor a nobody account exists");
    None
}

/// A bash loop run as `account` for at most 100 s, with `S` and `V` set, and `L`
/// a log it appends to (returned) so the test knows the attack was tried.
fn watcher(account: (u32, u32), script: &str, s: &Path, v: &Path) -> (KillOnDrop, PathBuf) {
    let log = s.parent().unwrap().join("watcher.log");
    fs::write(&log, "").unwrap();
    std::os::unix::fs::chown(&log, Some(account.0), Some(account.1)).unwrap();
    let bounded = format!("while [ $SECONDS -lt 100 ]; do {script}; sleep 0.005; done");
    let child = Command::new("bash")
        .args(["-c", &bounded])
        .env("S", s)
        .env("V", v)
        .env("L", &log)
        .uid(account.0)
        .gid(account.1)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash starts");
    (KillOnDrop(child), log)
}

/// How many lines of the watcher's log say `word`.
fn tried(log: &Path, word: &str) -> usize {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == word)
        .count()
}

/// A directory like /tmp: everyone may create entries, only owners remove them.
fn sticky(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

/// A root-only directory holding files that must survive, with what they held.
fn victim(parent: &Path) -> (PathBuf, Vec<(PathBuf, String, u32)>) {
    let dir = parent.join("root-only");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let files = ["passwd", "pg_hba.conf", "out.json"]
        .iter()
        .map(|name| {
            let path = dir.join(name);
            fs::write(&path, format!("root's own {name}\n")).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
            (path, format!("root's own {name}\n"), 0o644)
        })
        .collect();
    (dir, files)
}

fn assert_untouched(files: &[(PathBuf, String, u32)]) {
    for (path, content, mode) in files {
        let meta = fs::symlink_metadata(path)
            .unwrap_or_else(|e| panic!("{} was removed: {e}", path.display()));
        assert!(meta.is_file(), "{} was replaced", path.display());
        assert_eq!(meta.uid(), 0, "{} was given away", path.display());
        assert_eq!(
            meta.mode() & 0o7777,
            *mode,
            "{} changed mode",
            path.display()
        );
        assert_eq!(&fs::read_to_string(path).unwrap(), content);
    }
}

/// A test directory every account may pass through.
fn open_tempdir() -> tempfile::TempDir {
    let tmp = common::tempdir();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

/// What a PostgreSQL run did while a watcher ran `script` as the server account.
struct Raced {
    tmp: tempfile::TempDir,
    scratch: PathBuf,
    files: Vec<(PathBuf, String, u32)>,
    log: PathBuf,
    stderr: String,
}

/// Runs `sockbench postgres --experiments EXPERIMENT` in a sticky TMPDIR while the
/// server account runs `script` (`S` the TMPDIR, `V` a root directory, `L` its log);
/// `None` (after saying why) when that cannot be played here.
fn race_postgres(test: &str, experiment: &str, script: &str) -> Option<Raced> {
    let account = other_account(test)?;
    if !postgres_installed(test) {
        return None;
    }
    let tmp = open_tempdir();
    let scratch = sticky(tmp.path(), "shared");
    let (victim_dir, files) = victim(tmp.path());
    let (_watcher, log) = watcher(account, script, &scratch, &victim_dir);
    let out = run(
        &scratch,
        &[
            "postgres",
            "--experiments",
            experiment,
            "--trials",
            "1",
            "--quick",
        ],
    );
    let stderr = text(&out.stderr);
    // The run may fail (the server cannot use what the watcher put in its way),
    // but with one line, and it removes what it made.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        no_run_dirs(&scratch),
        "left behind: {:?}",
        common::leftovers(&scratch)
    );
    Some(Raced {
        tmp,
        scratch,
        files,
        log,
        stderr,
    })
}

#[test]
fn links_planted_in_the_data_directory_never_make_root_write_elsewhere() {
    // Once the postmaster runs (initdb's own servers write no postmaster.opts),
    // pg_hba.conf is replaced by a link to a root file, over and over (the
    // authentication experiment rewrites it at every switch).
    let Some(raced) = race_postgres(
        "links_planted_in_the_data_directory",
        "auth",
        r#"for d in "$S"/sockbench-pg-*/data; do [ -f "$d/postmaster.opts" ] || continue;
           ln -sfn "$V/passwd" "$d/pg_hba.conf" 2>/dev/null && echo planted >> "$L"; done"#,
    ) else {
        return;
    };
    assert!(
        tried(&raced.log, "planted") > 0,
        "the watcher never got in: {}",
        raced.stderr
    );
    assert_untouched(&raced.files);
}

#[test]
fn cleanup_never_follows_what_the_server_account_put_in_place() {
    // Rename the run's directory away and put a link to a root directory in its
    // place; inside data/, links to it and a swapped subdirectory.
    let Some(raced) = race_postgres(
        "cleanup_never_follows",
        "query",
        r#"for d in "$S"/sockbench-pg-*; do [ -d "$d" ] && [ ! -L "$d" ] || continue;
             echo tried >> "$L";
             if mv "$d" "$S/moved.$RANDOM" 2>/dev/null; then ln -s "$V" "$d"; fi;
             ln -s "$V" "$d/data/link-to-root" 2>/dev/null;
             if mv "$d/data/pg_stat" "$d/data/pg_stat.old" 2>/dev/null; then
               ln -s "$V" "$d/data/pg_stat"; fi; done"#,
    ) else {
        return;
    };
    assert!(
        tried(&raced.log, "tried") > 0,
        "the watcher never saw the run"
    );
    assert_untouched(&raced.files);
    let moved: Vec<_> = common::leftovers(&raced.scratch)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("moved."))
        .collect();
    assert!(moved.is_empty(), "the server account renamed {moved:?}");
    drop(raced.tmp);
}

#[test]
fn a_result_directory_swapped_for_a_link_mid_run_keeps_the_file_where_it_was() {
    let Some(account) = other_account("a_result_directory_swapped") else {
        return;
    };
    let tmp = open_tempdir();
    let shared = sticky(tmp.path(), "shared");
    let (victim_dir, files) = victim(tmp.path());
    let theirs = shared.join("results");
    fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(account.0), Some(account.1)).unwrap();
    // Once the first experiment is written, the directory becomes a link to root's.
    let (_watcher, _) = watcher(
        account,
        r#"[ -f "$S/results/out.json" ] && [ ! -L "$S/results" ] &&
           mv "$S/results" "$S/results.old" && ln -s "$V" "$S/results""#,
        &shared,
        &victim_dir,
    );
    let json = theirs.join("out.json");
    let out = run(
        tmp.path(),
        &[
            "sockets",
            "--transports",
            "unix",
            "--workloads",
            "connect,pingpong,stream",
            "--trials",
            "1",
            "--quick",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_untouched(&files);
    let kept = fs::read_to_string(shared.join("results.old/out.json")).expect("file kept");
    assert_eq!(
        common::experiments(&serde_json::from_str(&kept).unwrap()).len(),
        3,
        "every experiment went to the directory that was opened"
    );
}

#[test]
fn a_planted_results_directory_or_link_is_refused_at_once() {
    let Some(account) = other_account("a_planted_results_directory") else {
        return;
    };
    let tmp = open_tempdir();
    let (victim_dir, files) = victim(tmp.path());
    for planted in ["link", "theirs"] {
        let shared = sticky(tmp.path(), &format!("shared-{planted}"));
        let results = shared.join("sockbench-results");
        if planted == "link" {
            std::os::unix::fs::symlink(&victim_dir, &results).unwrap();
        } else {
            fs::create_dir(&results).unwrap();
            std::os::unix::fs::chown(&results, Some(account.0), Some(account.1)).unwrap();
        }
        let started = Instant::now();
        let out = sockbench(tmp.path())
            .arg("run")
            .current_dir(&shared)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{planted}: {stderr}");
        assert!(stderr.contains("sockbench-results"), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "refused before measuring"
        );
    }
    assert_untouched(&files);
}

/// No directory of a run is left in `scratch`.
fn no_run_dirs(scratch: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = common::leftovers(scratch)
            .iter()
            .any(|p| p.to_string_lossy().contains("sockbench-pg-"));
        if !left || Instant::now() > deadline {
            return !left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_directory_that_takes_no_result_file_is_refused_alike_whichever_it_is() {
    let Some(account) = other_account("a_directory_that_takes_no_result_file") else {
        return;
    };
    let tmp = open_tempdir();
    let readonly_cwd = tmp.path().join("cwd");
    fs::create_dir(&readonly_cwd).unwrap();
    let readonly_results = tmp.path().join("cwd2");
    fs::create_dir_all(readonly_results.join("sockbench-results")).unwrap();
    std::os::unix::fs::chown(&readonly_results, Some(account.0), Some(account.1)).unwrap();
    std::os::unix::fs::chown(
        readonly_results.join("sockbench-results"),
        Some(account.0),
        Some(account.1),
    )
    .unwrap();
    fs::set_permissions(
        readonly_results.join("sockbench-results"),
        fs::Permissions::from_mode(0o555),
    )
    .unwrap();
    for cwd in [&readonly_cwd, &readonly_results] {
        let out = sockbench(tmp.path())
            .arg("run")
            .current_dir(cwd)
            .uid(account.0)
            .gid(account.1)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", cwd.display());
        assert!(stderr.contains("--json"), "{stderr}");
    }
}

#[test]
fn a_link_planted_above_json_or_output_is_refused_and_a_root_link_followed() {
    let Some(account) = other_account("a_link_planted_above_json_or_output") else {
        return;
    };
    let tmp = open_tempdir();
    let shared = sticky(tmp.path(), "shared");
    let secret = tmp.path().join("secret");
    fs::create_dir(&secret).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o700)).unwrap();
    let planted = Command::new("ln")
        .arg("-s")
        .arg(&secret)
        .arg(shared.join("out"))
        .uid(account.0)
        .gid(account.1)
        .status()
        .unwrap();
    assert!(planted.success(), "the other account plants its link");
    let fixture = common::fixtures::run_path();
    let fixture = fixture.to_str().unwrap();
    let page = shared.join("out/page.html");
    let json = shared.join("out/run.json");
    let refused = [
        vec!["report", fixture, "--output", page.to_str().unwrap()],
        [
            &common::SHORT_SOCKETS[..],
            &["--transports", "unix", "--json", json.to_str().unwrap()],
        ]
        .concat(),
    ];
    for args in refused {
        let out = run(tmp.path(), &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        let link = format!("{} is a symbolic link", shared.join("out").display());
        assert!(stderr.contains(&link), "{stderr}");
    }
    assert_eq!(common::leftovers(&secret), Vec::<PathBuf>::new());
    // A link of root's in a directory of root's is followed as before.
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, tmp.path().join("ours")).unwrap();
    let page = tmp.path().join("ours/page.html");
    let out = run(
        tmp.path(),
        &["report", fixture, "--output", page.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(real.join("page.html").is_file());
}

/// A leftover of a killed run in `scratch`, as a run leaves one: root's directory
/// `name` (0711), its owner file naming a sockbench process that is gone (a PID
/// above the kernel's limit), and `inner` in it, the server account's (0700).
fn leftover(scratch: &Path, name: &str, inner: &str, account: (u32, u32)) -> (PathBuf, PathBuf) {
    let dir = scratch.join(name);
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o711)).unwrap();
    fs::write(dir.join("sockbench.owner"), "4194305 1\n").unwrap();
    let inner = dir.join(inner);
    fs::create_dir(&inner).unwrap();
    std::os::unix::fs::chown(&inner, Some(account.0), Some(account.1)).unwrap();
    fs::set_permissions(&inner, fs::Permissions::from_mode(0o700)).unwrap();
    (dir, inner)
}

/// Runs `program ARGS` as `account` in `dir`, to its end (at most 60 s).
fn as_account(account: (u32, u32), dir: &Path, program: &str, args: &[&str]) {
    let mut command = Command::new(program);
    command
        .args(args)
        .uid(account.0)
        .gid(account.1)
        .current_dir(dir)
        .stdin(Stdio::null());
    let out = assert_cmd::Command::from_std(command)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{program}: {}", text(&out.stderr));
}

/// The sweep at the start of a measuring command (this one fails at once: nothing
/// listens on port 1).
fn sweep(scratch: &Path) {
    let out = run(
        scratch,
        &["redis", "--url", "redis://127.0.0.1:1", "--quick"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn a_pid_the_server_account_planted_does_not_keep_a_leftover() {
    let Some(account) = other_account("a_pid_the_server_account_planted") else {
        return;
    };
    let tmp = open_tempdir();
    let scratch = common::scratch(tmp.path());
    // A process of the server account's own, named as its server is.
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    fs::copy("/bin/sleep", bin.join("redis-server")).unwrap();
    let held = Command::new(bin.join("redis-server"))
        .arg("100")
        .uid(account.0)
        .gid(account.1)
        .current_dir("/")
        .spawn()
        .unwrap();
    let held = KillOnDrop(held);
    let (redis, srv) = leftover(&scratch, "sockbench-redis-00000000000a", "srv", account);
    let pid = held.0.id().to_string();
    as_account(
        account,
        &srv,
        "sh",
        &["-c", &format!("echo {pid} > redis.pid")],
    );
    let (pg, data) = leftover(&scratch, "sockbench-pg-00000000000a", "data", account);
    as_account(
        account,
        &data,
        "sh",
        &["-c", "printf '1\\n/x\\n' > postmaster.pid"],
    );
    sweep(&scratch);
    assert!(!redis.exists(), "kept by a pid file naming process {pid}");
    assert!(!pg.exists(), "kept by a pid file naming init");
    drop(held);
}

#[test]
fn a_tree_the_server_account_planted_thousands_deep_is_swept() {
    let Some(account) = other_account("a_tree_the_server_account_planted") else {
        return;
    };
    let tmp = open_tempdir();
    let scratch = common::scratch(tmp.path());
    let (root_only, files) = victim(tmp.path());
    let (dir, srv) = leftover(&scratch, "sockbench-redis-00000000000b", "srv", account);
    // Far deeper than a path may be long, with links to root's files at the bottom.
    let plant = format!(
        "for (1..3000) {{ mkdir 'd' or die $!; chdir 'd' or die $! }} \
         open(F, '>f') or die $!; symlink('{0}/passwd', 'file') or die $!; \
         symlink('{0}', 'dir') or die $!",
        root_only.display()
    );
    as_account(account, &srv, "perl", &["-e", &plant]);
    sweep(&scratch);
    assert!(!dir.exists(), "the deep tree kept its directory");
    assert_untouched(&files);
}
