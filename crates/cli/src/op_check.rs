//! The CLI's store commands checked against the toolkit's op list: each command's
//! arguments have the names of its op's parameters and agree on which are required,
//! so a parameter cannot be described differently on the command line and to a model.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::CommandFactory;

    use crate::cli::Cli;

    /// (CLI subcommand, op, CLI-only arguments, op-only parameters), each exception
    /// with its reason in a comment.
    const PAIRS: &[(&str, &str, &[&str], &[&str])] = &[
        // The file comes from stdin on the command line.
        ("write", "write", &[], &["content"]),
        // --body-file reads the body from a file; the op takes the text.
        ("remember", "remember", &["body_file"], &[]),
        ("forget", "forget", &[], &[]),
        ("get", "get", &[], &[]),
        ("retrieve", "retrieve", &[], &[]),
        // The command shares QueryArgs with retrieve; search has no explain or time
        // travel (it refuses --at and --now).
        ("search", "search", &["explain", "at", "now"], &[]),
        ("entity", "entity", &[], &[]),
        ("tree", "tree", &[], &[]),
        ("topics", "topics", &[], &[]),
        ("log", "log", &[], &[]),
        ("sync", "sync", &[], &[]),
        ("rebuild", "rebuild", &[], &[]),
        ("stats", "stats", &[], &[]),
        ("embed", "embed_pending", &[], &[]),
        // The CLI reads the sessions from a file and may name a model endpoint and its
        // timeout; over MCP/HTTP the model is the operator's (environment:
        // GITLOOM_LLM_URL, GITLOOM_LLM_TIMEOUT, ...), never the caller's.
        (
            "ingest",
            "ingest",
            &["file", "llm_url", "llm_model", "llm_key_env", "llm_timeout"],
            &["sessions"],
        ),
        ("gc", "gc", &[], &[]),
    ];

    #[test]
    fn cli_commands_agree_with_op_schemas() {
        let cli = Cli::command();
        for (cmd, op_name, cli_only, op_only) in PAIRS {
            let sub = cli
                .find_subcommand(cmd)
                .unwrap_or_else(|| panic!("no subcommand {cmd}"));
            let op = gitloom_toolkit::find(op_name).unwrap_or_else(|| panic!("no op {op_name}"));
            let schema = op.params_schema();
            let props: BTreeSet<String> = schema["properties"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let required: BTreeSet<String> = schema["required"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let args: Vec<&clap::Arg> = sub
                .get_arguments()
                .filter(|a| !a.is_global_set() && a.get_id() != "help")
                .collect();
            let names: BTreeSet<String> = args.iter().map(|a| a.get_id().to_string()).collect();
            let expected_cli: BTreeSet<String> = props
                .iter()
                .filter(|p| !op_only.contains(&p.as_str()))
                .cloned()
                .chain(cli_only.iter().map(|s| (*s).to_owned()))
                .collect();
            assert_eq!(
                names, expected_cli,
                "`gitloom {cmd}` arguments vs op `{op_name}` parameters"
            );
            for a in &args {
                let id = a.get_id().as_str();
                if cli_only.contains(&id) {
                    continue;
                }
                assert_eq!(
                    a.is_required_set(),
                    required.contains(id),
                    "`gitloom {cmd}` {id}: required on the command line iff required by op `{op_name}`"
                );
            }
        }
    }

    /// Every op that has a CLI command is in the table above (ops without one are
    /// reachable through MCP and HTTP only, and listed here on purpose).
    #[test]
    fn every_op_is_accounted_for() {
        let without_cli = ["semantic_search", "related", "vocab", "history", "answer"];
        for op in gitloom_toolkit::ops() {
            assert!(
                PAIRS.iter().any(|p| p.1 == op.name) || without_cli.contains(&op.name),
                "op {} has no CLI command and is not listed as MCP/HTTP-only",
                op.name
            );
        }
    }
}
