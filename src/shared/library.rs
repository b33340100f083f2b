//! One library of a profile, as the layers below the profile reader take it: the store
//! looks for its debug file, the remote sources ask servers for it, the hints explain it.
//! The profile reader fills it in (`profile/libs.rs`).

use crate::shared::debugid::DebugId;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lib {
    pub debug_name: String,
    pub breakpad_id: DebugId,
    pub name: Option<String>,
    pub path: Option<String>,
    pub debug_path: Option<String>,
    pub code_id: Option<String>,
    pub arch: Option<String>,
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub offset: u64,
    /// Paths the profile named that are never looked at (a UNC, device or `/net` path:
    /// [`crate::shared::pathname::refused_from_outside`]), each with why: reported as the
    /// module's errors.
    pub refused: Vec<String>,
    /// The profile named a path of it relative (looked up beside the profile, then in
    /// the current folder), or absolute into the profile's own folder: what is found there
    /// came with the profile, so the file names in its debug info are the profile's
    /// author's, not this machine's (`/source/v1`).
    pub relative: bool,
}

impl Lib {
    /// The GNU build ID of an ELF module, from its code ID, when it is one: hex, and its
    /// first 16 bytes give the requested debug ID (which rules out PE and Mach-O code IDs).
    pub fn elf_build_id(&self, breakpad_id: &DebugId) -> Option<String> {
        let code_id = self.code_id.as_deref()?.to_ascii_lowercase();
        if code_id.len() < 8
            || code_id.len() % 2 != 0
            || !code_id.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        let bytes: Vec<u8> = (0..code_id.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&code_id[i..i + 2], 16).ok())
            .collect();
        let id = crate::shared::debugid::elf_from_build_id(&bytes, true);
        breakpad_id.is(&id).then_some(code_id)
    }

    /// Its path made relative (for `--simpleperf-binary-cache DIR/<lib path>`), unless it
    /// could lead out of the folder.
    pub fn device_path(&self) -> Option<&std::path::Path> {
        let rel = self.path.as_deref()?.trim_start_matches('/');
        // Each component a plain name: on Windows `C:` or `NUL` would lead elsewhere.
        let ok = !rel.is_empty()
            && rel
                .split('/')
                .filter(|c| !c.is_empty())
                .all(crate::shared::pathname::is_plain);
        ok.then(|| std::path::Path::new(rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_ids_only_for_elf_code_ids() {
        let lib = |code: &str| Lib {
            code_id: Some(code.to_string()),
            ..Default::default()
        };
        let elf = lib("eae34e02f5655745dd557688f4ec4af564554074");
        assert_eq!(
            elf.elf_build_id(&"024EE3EA65F54557DD557688F4EC4AF50".into())
                .as_deref(),
            Some("eae34e02f5655745dd557688f4ec4af564554074")
        );
        // A PE code ID (timestamp + size) is not a build ID.
        assert!(
            lib("6553F1003000")
                .elf_build_id(&"A0EA581CEB06F24F4C4C44205044422E1".into())
                .is_none()
        );
    }
}
