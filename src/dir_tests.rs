//! The descriptor-held directory against the tricks another account can play:
//! links planted at a name, a directory swapped for a link after it was opened, and
//! special files that would block or be written through.

use super::*;
use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};

#[test]
fn replacing_a_planted_link_replaces_the_link_not_its_target() {
    let top = tempfile::tempdir().unwrap();
    let victim = top.path().join("victim");
    fs::write(&victim, "root's").unwrap();
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o644)).unwrap();
    let inside = top.path().join("inside");
    fs::create_dir(&inside).unwrap();
    symlink(&victim, inside.join("pg_hba.conf")).unwrap();

    let dir = Dir::open(&inside).unwrap();
    dir.replace_file("pg_hba.conf", b"hba", 0o600, None)
        .unwrap();

    assert_eq!(fs::read_to_string(&victim).unwrap(), "root's");
    assert_eq!(fs::metadata(&victim).unwrap().mode() & 0o777, 0o644);
    let written = inside.join("pg_hba.conf");
    assert!(fs::symlink_metadata(&written).unwrap().is_file());
    assert_eq!(fs::read_to_string(&written).unwrap(), "hba");
    assert_eq!(fs::metadata(&written).unwrap().mode() & 0o777, 0o600);
    assert_eq!(dir.names().unwrap().len(), 1, "no temporary file left");
}

#[test]
fn a_path_follows_only_links_no_other_account_controls() {
    let top = tempfile::tempdir().unwrap();
    let real = top.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::write(real.join("mark"), "x").unwrap();
    let opened = |path: &Path| Dir::open(path).and_then(|d| d.open_read("mark")).is_ok();
    // The account's own links in its own directory: absolute, relative, chained.
    symlink(&real, top.path().join("mine")).unwrap();
    symlink("mine", top.path().join("chained")).unwrap();
    assert!(opened(&top.path().join("mine")));
    assert!(opened(&top.path().join("chained")));
    assert!(opened(&top.path().join("mine/../real")));
    // The same link in a directory others can write is refused, and named.
    let shared = top.path().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    symlink(&real, shared.join("out")).unwrap();
    let e = Dir::open(&shared.join("out")).unwrap_err();
    let named = format!(
        "{} is a symbolic link in a directory",
        shared.join("out").display()
    );
    assert!(e.to_string().starts_with(&named), "{e}");
    assert!(Dir::open_parent(&shared.join("out/file")).is_err());
    // A link of another account is refused wherever it is.
    if euid() == 0 {
        let theirs = top.path().join("theirs");
        symlink(&real, &theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
        let e = Dir::open(&theirs.join("sub/..")).unwrap_err();
        assert!(
            e.to_string().contains("of another account (uid 65534)"),
            "{e}"
        );
    }
    // A loop ends.
    symlink("loop", top.path().join("loop")).unwrap();
    assert!(Dir::open(&top.path().join("loop")).is_err());
}

#[test]
fn a_directory_swapped_for_a_link_after_opening_changes_nothing() {
    let top = tempfile::tempdir().unwrap();
    let shared = top.path().join("shared");
    let elsewhere = top.path().join("root-only");
    fs::create_dir(&shared).unwrap();
    fs::create_dir(&elsewhere).unwrap();
    let dir = Dir::open(&shared).unwrap();
    dir.replace_file("result.json", b"first", 0o644, None)
        .unwrap();
    // Another account moves the directory away and puts a link in its place.
    fs::rename(&shared, top.path().join("moved")).unwrap();
    symlink(&elsewhere, &shared).unwrap();
    dir.replace_file("result.json", b"second", 0o644, None)
        .unwrap();
    assert!(!elsewhere.join("result.json").exists());
    assert_eq!(
        fs::read_to_string(top.path().join("moved/result.json")).unwrap(),
        "second"
    );
}

#[test]
fn new_files_and_inner_directories_never_go_through_links() {
    let top = tempfile::tempdir().unwrap();
    let outside = top.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let dir = Dir::open(top.path()).unwrap();
    symlink(outside.join("file"), top.path().join("file")).unwrap();
    symlink(&outside, top.path().join("sub")).unwrap();
    assert!(dir.create_new("file", 0o600).is_err());
    assert!(!outside.join("file").exists());
    assert!(
        dir.open_dir("sub").is_err(),
        "a link is not opened as a dir"
    );
    assert!(dir.make_dir("sub", 0o700, None).is_err());
}

#[test]
fn removing_a_tree_removes_links_and_never_what_they_point_to() {
    let top = tempfile::tempdir().unwrap();
    let outside = top.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep"), "x").unwrap();
    let tree = top.path().join("tree");
    fs::create_dir_all(tree.join("a/b/c")).unwrap();
    fs::write(tree.join("a/b/c/file"), "x").unwrap();
    symlink(&outside, tree.join("a/link-to-dir")).unwrap();
    symlink(outside.join("keep"), tree.join("a/b/link-to-file")).unwrap();

    Dir::open(top.path()).unwrap().remove_tree("tree").unwrap();

    assert!(!tree.exists());
    assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "x");
}

/// Set in the child process of the next test: the tree it removes.
const DEEP_CHILD: &str = "SOCKBENCH_TEST_DEEP_TREE";

#[test]
fn a_tree_of_any_depth_goes_with_few_descriptors_and_no_link_followed() {
    if let Some(top) = std::env::var_os(DEEP_CHILD) {
        // The child: fewer descriptors allowed than the tree is deep many times
        // over, then the removal.
        let limit = libc::rlimit {
            rlim_cur: 3 * MAX_OPEN as libc::rlim_t + 8,
            rlim_max: 3 * MAX_OPEN as libc::rlim_t + 8,
        };
        // SAFETY: setrlimit reads only the struct it is given.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
        let removed = Dir::open(Path::new(&top)).unwrap().remove_tree("tree");
        println!("removed: {removed:?}");
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let outside = top.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("keep"), "x").unwrap();
    // 3,000 levels, longer than a path may be: made through descriptors, with a
    // file, a link to a file and a link to a directory at the bottom, and a side
    // branch half-way.
    let mut here = Dir::open(top.path())
        .unwrap()
        .make_dir("tree", 0o700, None)
        .unwrap();
    for depth in 0..3_000 {
        if depth == 1_500 {
            here.make_dir("side", 0o700, None)
                .unwrap()
                .create_new("f", 0o600)
                .unwrap();
        }
        here = here.make_dir("d", 0o700, None).unwrap();
    }
    here.create_new("file", 0o600).unwrap();
    let through = |name: &str| {
        Path::new("/proc/self/fd")
            .join(here.raw_fd().to_string())
            .join(name)
    };
    symlink(outside.join("keep"), through("to-file")).unwrap();
    symlink(&outside, through("to-dir")).unwrap();
    drop(here);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dir::tests::a_tree_of_any_depth_goes_with_few_descriptors_and_no_link_followed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DEEP_CHILD, top.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("removed: Ok(())"), "{said}");
    assert!(!top.path().join("tree").exists());
    assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "x");
}

#[test]
fn a_fifo_is_refused_for_reading_without_blocking() {
    let top = tempfile::tempdir().unwrap();
    let fifo = top.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let dir = Dir::open(top.path()).unwrap();
    assert!(dir.open_read("fifo").is_err());
    assert_eq!(dir.entry_at("fifo").unwrap().unwrap().kind(), "a FIFO");
    assert!(dir.entry_at("nothing").unwrap().is_none());
}

#[test]
fn a_new_name_is_never_taken_over_an_existing_file() {
    let top = tempfile::tempdir().unwrap();
    let dir = Dir::open(top.path()).unwrap();
    fs::write(top.path().join("taken"), "theirs").unwrap();
    let (_file, temp) = dir.create_temp(OsStr::new("x"), 0o600).unwrap();
    let e = dir.rename_new(&temp, "taken").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(
        fs::read_to_string(top.path().join("taken")).unwrap(),
        "theirs"
    );
}
