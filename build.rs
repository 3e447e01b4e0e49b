//! Records the git commit sockbench is built from, so every result file can say
//! exactly which code measured it. Outside a git checkout the commit is unknown.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash}-modified")
            } else {
                hash
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=SOCKBENCH_COMMIT={commit}");
    // Rebuilt when HEAD moves, the index changes or the branch gets a commit. In a
    // worktree `.git` is a file: git says where its directories are.
    let git_dir = git(&["rev-parse", "--git-dir"]);
    let common_dir = git(&["rev-parse", "--git-common-dir"]);
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let mut watched = Vec::new();
    if let Some(dir) = &git_dir {
        watched.push(format!("{dir}/HEAD"));
        watched.push(format!("{dir}/index"));
    }
    if let Some(dir) = &common_dir {
        watched.push(format!("{dir}/packed-refs"));
        if let Some(branch) = &branch {
            watched.push(format!("{dir}/{branch}"));
        }
    }
    for path in watched {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
