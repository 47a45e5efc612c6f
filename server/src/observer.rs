//! The server's [`Observer`]: every cook event goes to the `/events`
//! stream as the same JSON objects `cook --json` prints, into the stage
//! counters, and, for `inputs` events, into the list of files each asset
//! read (what the watcher then watches).

use crate::state::Shared;
use ludus_anim_cooker::events::{CookEvent, Observer};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

pub struct ServerObserver<'a> {
    shared: &'a Shared,
    inputs: Mutex<Vec<(String, Vec<PathBuf>)>>,
    slow_asset: Option<Duration>,
}

impl<'a> ServerObserver<'a> {
    pub fn new(shared: &'a Shared, slow_asset: Option<Duration>) -> ServerObserver<'a> {
        ServerObserver {
            shared,
            inputs: Mutex::new(Vec::new()),
            slow_asset,
        }
    }

    /// Asset name → the files its cook read.
    pub fn take_inputs(&self) -> Vec<(String, Vec<PathBuf>)> {
        self.inputs
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }
}

impl Observer for ServerObserver<'_> {
    fn event(&self, event: &CookEvent<'_>) {
        for v in event.to_json() {
            self.shared.emit(v.to_string());
        }
        match event {
            CookEvent::Stage { stage, hit, .. } => self.shared.metrics.stage(*stage, *hit),
            CookEvent::Inputs { source, files } => {
                if let Ok(mut v) = self.inputs.lock() {
                    v.push((source.to_string(), files.to_vec()));
                }
            }
            CookEvent::AssetStarted { .. } => {
                if let Some(d) = self.slow_asset {
                    std::thread::sleep(d);
                }
            }
            _ => {}
        }
    }
}
