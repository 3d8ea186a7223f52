//! Handover-timed actions in a call: which actions a `timed` policy applies
//! (docs/architecture.md, "Handover-timed actions").
//!
//! The schedule itself, the pacer hold, the estimator guard and the protection boost it drives,
//! and the predictions each decision hands it (with the forecast timing error a simulation can
//! add, [`TimingError`]) are the plugin's ([`pacer::ActionsHandle`], [`pacer::PolicyController`]).

use pacer::telemetry::ActionsRecord;
use pacer::{ActionConfig, ActionsHandle};
use std::time::Instant;

pub use pacer::actions::TimingError;

/// The actions a `timed` policy applies at each predicted handover, each with the plugin's
/// default window ([`ActionConfig::default`]).
///
/// The key-frame block is not among them: the call engine's encoder schedules no periodic key
/// frames (libwebrtc's does not either: WebRTC video sends a key frame first and on a PLI), so
/// it would have nothing to block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionSet {
    /// The pacer hold.
    pub hold: bool,
    /// The estimator guard.
    pub guard: bool,
    /// The protection boost.
    pub boost: bool,
    /// The delayed duplicate (the boost's alternative; not in [`Self::ALL`]).
    pub duplicate: bool,
    /// The playout raise.
    pub playout: bool,
    /// Discardable frames.
    pub discardable: bool,
}

impl ActionSet {
    /// Every action of plain `timed`: the hold, the guard, the boost and the playout raise.
    pub const ALL: Self = Self {
        hold: true,
        guard: true,
        boost: true,
        duplicate: false,
        playout: true,
        discardable: false,
    };

    /// The names `timed:<actions>` takes, joined by `+`.
    pub const NAMES: [&'static str; 6] = [
        "hold",
        "guard",
        "boost",
        "duplicate",
        "playout",
        "discardable",
    ];

    /// Reads `hold+guard` (any non-empty `+`-joined subset of [`Self::NAMES`], each at most once).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut set = Self {
            hold: false,
            guard: false,
            boost: false,
            duplicate: false,
            playout: false,
            discardable: false,
        };
        for name in text.split('+') {
            let slot = match name {
                "hold" => &mut set.hold,
                "guard" => &mut set.guard,
                "boost" => &mut set.boost,
                "duplicate" => &mut set.duplicate,
                "playout" => &mut set.playout,
                "discardable" => &mut set.discardable,
                other => {
                    return Err(format!(
                        "unknown action `{other}` in `{text}`: expected a +-joined list of hold, \
                         guard, boost, duplicate, playout, discardable (e.g. timed:hold+guard)"
                    ));
                }
            };
            if std::mem::replace(slot, true) {
                return Err(format!("`{name}` is named twice in `{text}`"));
            }
        }
        Ok(set)
    }

    /// The `+`-joined names of the actions on.
    pub fn name(self) -> String {
        let on = [
            self.hold,
            self.guard,
            self.boost,
            self.duplicate,
            self.playout,
            self.discardable,
        ];
        Self::NAMES
            .iter()
            .zip(on)
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The plugin's configuration: its default windows, with only these actions on.
    pub fn config(self) -> ActionConfig {
        let mut config = ActionConfig::default();
        config.hold.enabled = self.hold;
        config.guard.enabled = self.guard;
        config.boost.enabled = self.boost;
        config.duplicate.enabled = self.duplicate;
        config.playout.enabled = self.playout;
        config.discardable.enabled = self.discardable;
        config.keyframe_block.enabled = false;
        config
    }
}

/// The actions of a `timed` policy and how its name shows them: a subset of the plugin's
/// defaults ([`ActionSet`]), or a whole [`ActionConfig`] read from a TOML file (every window,
/// the boost's factor and the probability threshold tunable, as in the plugin). The
/// configuration is boxed: it is the largest part of a [`PolicyChoice`](super::PolicyChoice),
/// which is moved around by value.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedActions {
    /// `None` for every action at its default window; else what follows `timed:` in the name.
    label: Option<String>,
    config: Box<ActionConfig>,
}

impl TimedActions {
    /// Every action at the plugin's default window.
    pub fn all() -> Self {
        Self::from_set(ActionSet::ALL)
    }

    /// A subset of the actions at the plugin's default windows.
    pub fn from_set(set: ActionSet) -> Self {
        Self {
            label: (set != ActionSet::ALL).then(|| set.name()),
            config: Box::new(set.config()),
        }
    }

    /// A whole [`ActionConfig`], checked, under `label` (the policy's name is `timed:<label>`).
    ///
    /// # Errors
    ///
    /// What [`ActionConfig::validate`] refuses.
    pub fn with_config(
        label: impl Into<String>,
        config: ActionConfig,
    ) -> Result<Self, pacer::actions::ActionConfigError> {
        config.validate()?;
        Ok(Self {
            label: Some(label.into()),
            config: Box::new(config),
        })
    }

    /// The [`ActionConfig`] in a TOML file (tables `hold`, `hold_gate`, `guard`, `boost`,
    /// `keyframe_block`, `duplicate`, `playout`, `discardable`, `onset` and the key `min_probability`; what is left out
    /// keeps its default), checked. Its name is
    /// the file's name, so telemetry says which file a call ran with.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not such a TOML document (the message names the key), or a
    /// value is out of range.
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the action configuration {}: {e}",
                path.display()
            )
        })?;
        let config: ActionConfig = toml::from_str(&text).map_err(|e| {
            format!(
                "{} is not an action configuration (tables hold, hold_gate, guard, boost, \
                 keyframe_block, duplicate, playout, discardable, onset; key min_probability): \
                 {e}",
                path.display()
            )
        })?;
        config
            .validate()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let label = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(Self {
            label: Some(label),
            config: Box::new(config),
        })
    }

    /// What follows `timed:` in the policy's name, if anything.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The plugin's configuration.
    pub fn config(&self) -> ActionConfig {
        *self.config
    }
}

/// The interval's action counters for telemetry, then reset; `None` when the call applies no
/// actions.
pub fn take_record(actions: Option<&ActionsHandle>, now: Instant) -> Option<ActionsRecord> {
    actions.map(|a| a.take_stats(now).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_sets_read_back_from_their_names_and_bad_ones_are_named() {
        for text in ["hold", "guard", "boost", "hold+guard", "hold+guard+boost"] {
            assert_eq!(ActionSet::parse(text).unwrap().name(), text);
        }
        assert_eq!(ActionSet::parse("boost+hold").unwrap().name(), "hold+boost");
        assert_eq!(ActionSet::ALL.name(), "hold+guard+boost+playout");
        let discardable = ActionSet::parse("discardable").unwrap();
        assert_eq!(discardable.name(), "discardable");
        assert!(discardable.config().discardable.enabled);
        assert!(!discardable.config().hold.enabled);
        let err = ActionSet::parse("hold+pray").unwrap_err();
        assert!(err.contains("unknown action `pray`"), "{err}");
        let err = ActionSet::parse("hold+hold").unwrap_err();
        assert!(err.contains("`hold` is named twice"), "{err}");
        assert!(ActionSet::parse("").is_err());
    }

    #[test]
    fn a_set_turns_on_only_its_actions_with_the_plugin_s_default_windows() {
        let config = ActionSet::parse("guard").unwrap().config();
        assert!(config.guard.enabled);
        assert!(!config.hold.enabled && !config.boost.enabled && !config.keyframe_block.enabled);
        assert_eq!(config.guard, ActionConfig::default().guard);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn an_action_file_sets_every_window_and_names_the_policy_after_the_file() {
        let dir = std::env::temp_dir().join(format!("leopace-actions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wide.toml");
        std::fs::write(
            &path,
            "min_probability = 0.3\n[hold]\nenabled = true\noffset_ms = -50\nduration_ms = 170\n\
             [boost]\nenabled = false\noffset_ms = 0\nduration_ms = 0\nmin_factor = 0.25\n",
        )
        .unwrap();
        let actions = TimedActions::from_file(&path).unwrap();
        assert_eq!(actions.label(), Some("wide.toml"));
        let config = actions.config();
        assert_eq!((config.hold.offset_ms, config.hold.duration_ms), (-50, 170));
        assert!(!config.boost.enabled);
        assert_eq!(config.min_probability, 0.3);
        assert_eq!(
            config.guard,
            ActionConfig::default().guard,
            "left out: the default"
        );

        std::fs::write(&path, "[hold]\nenabled = true\noffset_ms = -50\n").unwrap();
        let err = TimedActions::from_file(&path).unwrap_err();
        assert!(
            err.contains("wide.toml") && err.contains("duration_ms"),
            "{err}"
        );
        std::fs::write(
            &path,
            "[hold]\nenabled = true\noffset_ms = 0\nduration_ms = 60000\n",
        )
        .unwrap();
        let err = TimedActions::from_file(&path).unwrap_err();
        assert!(err.contains("hold"), "{err}");
        std::fs::write(&path, "[pray]\nenabled = true\n").unwrap();
        let err = TimedActions::from_file(&path).unwrap_err();
        assert!(err.contains("pray"), "{err}");
        let err = TimedActions::from_file(&dir.join("missing.toml")).unwrap_err();
        assert!(
            err.contains("cannot read") && err.contains("missing.toml"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn subsets_are_labelled_by_their_actions_and_the_full_set_not_at_all() {
        assert_eq!(TimedActions::all().label(), None);
        assert_eq!(TimedActions::all().config(), ActionSet::ALL.config());
        let some = TimedActions::from_set(ActionSet::parse("guard+boost").unwrap());
        assert_eq!(some.label(), Some("guard+boost"));
    }
}
