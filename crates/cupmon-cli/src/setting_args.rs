//! The `cupmon run` flags of the settings, made from cupmon-config's one table: the
//! same names, syntax, defaults and meanings as the environment variables. The values
//! stay text here; `MonitorConfig::set` parses them, as it parses the environment.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use cupmon_config::SETTINGS;

/// The settings given on the command line, as `(setting name, text)` in table order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingArgs {
    pub given: Vec<(&'static str, String)>,
}

/// Settings that are switches on the command line (`--window-on-signal`).
fn is_switch(value: &str) -> bool {
    value == "0|1"
}

impl Args for SettingArgs {
    fn augment_args(cmd: Command) -> Command {
        let mut cmd = cmd;
        for s in SETTINGS {
            let Some(flag) = s.flag else { continue };
            let mut help = format!("{} ({})", s.help, s.env);
            if !s.default.is_empty() && !is_switch(s.value) {
                help.push_str(&format!(" [default: {}]", s.default));
            }
            let long_help = format!("{help}\nAllowed: {}.", s.allowed);
            let mut arg = Arg::new(s.name).long(flag).help(help).long_help(long_help);
            arg = if is_switch(s.value) {
                arg.action(ArgAction::SetTrue)
            } else {
                arg.value_name(s.value).action(ArgAction::Set)
            };
            if flag == "output" {
                arg = arg.short('o');
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for SettingArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for s in SETTINGS.iter().filter(|s| s.flag.is_some()) {
            if is_switch(s.value) {
                if matches.get_flag(s.name) {
                    given.push((s.name, "1".to_owned()));
                }
            } else if let Some(v) = matches.get_one::<String>(s.name) {
                given.push((s.name, v.clone()));
            }
        }
        Ok(Self { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
