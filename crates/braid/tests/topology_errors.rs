//! Broken graph files as a user meets them on the command line: exit
//! status 2 and an error naming the file and the key.

use std::process::Command;

const LINKS: &str = r#"
[topology]
kind = "graph"
[[topology.link]]
name = "a"
from = "S"
to = "R"
rate = "10Mbit"
delay = "5ms"
[[topology.link]]
name = "b"
from = "R"
to = "D"
rate = "10Mbit"
delay = "5ms"
[[topology.link]]
name = "c"
from = "X"
to = "D"
rate = "10Mbit"
"#;

#[test]
fn graph_errors_exit_2_naming_file_and_key() {
    let tmp = tempfile::Builder::new().prefix("braid-graph-errors-").tempdir().unwrap();
    let dir = tmp.path();
    let cases = [
        (
            "unknown-link.toml",
            "[[topology.path]]\nname = \"p\"\nlinks = [\"a\", \"z\"]\n[[flow]]\npaths = [\"p\"]\n",
            "topology.path[0].links[1]",
            "no link named \"z\"",
        ),
        (
            "gap.toml",
            "[[topology.path]]\nname = \"p\"\nlinks = [\"a\", \"c\"]\n[[flow]]\npaths = [\"p\"]\n",
            "topology.path[0].links[1]",
            "must join",
        ),
        (
            "missing-path.toml",
            "[[topology.path]]\nname = \"p\"\nlinks = [\"a\", \"b\"]\n[[flow]]\npaths = [\"q\"]\n",
            "flow[0].paths[0]",
            "no path named \"q\"",
        ),
        (
            // The file's own "a-rev" is taken for the default ACK route and
            // leads elsewhere: the error says which route it tried.
            "default-reverse.toml",
            "[[topology.link]]\nname = \"a-rev\"\nfrom = \"R\"\nto = \"X\"\nrate = \"1Mbit\"\n\
             [[topology.path]]\nname = \"p\"\nlinks = [\"a\", \"b\"]\n[[flow]]\npaths = [\"p\"]\n",
            "topology.path[0].reverse",
            "no `reverse` given: the default route is [\"b-rev\", \"a-rev\"]",
        ),
        (
            "reverse.toml",
            "[[topology.path]]\nname = \"p\"\nlinks = [\"a\", \"b\"]\nreverse = [\"c\"]\n[[flow]]\npaths = [\"p\"]\n",
            "topology.path[0].reverse",
            "must lead from node \"D\" back to node \"S\", where the path starts",
        ),
    ];
    for (name, tail, key, words) in cases {
        let file = dir.join(name);
        std::fs::write(&file, format!("{LINKS}{tail}")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_braid")).args(["run", "-q"]).arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{err}");
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&file.display().to_string()) && err.contains(&format!("`{key}`")), "{name}: {err}");
        assert!(err.contains(words), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}
