//! Split DWARF: a skeleton unit's `.dwo` file, or its part of the `.dwp` package, loaded
//! within the module's budget of decompressed bytes.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use addr2line::SplitDwarfLoad;
use gimli::{RunTimeEndian, SectionId};

use super::{Backing, R};
use crate::resolve::bytes::FileBytes;
use crate::resolve::section::Budget;

/// A split unit: its `.dwo` file's (or `.dwp` part's) sections, and the unit in them with
/// its skeleton's relocated attributes (addr2line's `DwoUnit`).
pub(super) struct SplitUnit {
    pub(super) dwarf: Arc<gimli::Dwarf<R>>,
    pub(super) unit: gimli::Unit<R>,
}

/// Where `.dwo` files and the `.dwp` package of a split-DWARF binary are looked for.
pub(super) struct SplitDwarf {
    pub(super) package: Option<gimli::DwarfPackage<R>>,
    pub(super) binary_dir: PathBuf,
    pub(super) endian: RunTimeEndian,
    /// The module's budget of decompressed bytes, which `.dwo` files loaded later share.
    pub(super) budget: Rc<Budget>,
}

/// Loads the sections of a `.dwo` or `.dwp` file within the module's `budget` (which
/// counts the file's compressed sections unless it is the debug file, counted already).
pub(super) fn load_split_sections(
    path: &Path,
    endian: RunTimeEndian,
    backing: &Backing,
    budget: &Budget,
    new_file: bool,
) -> Option<impl FnMut(SectionId) -> Result<R, gimli::Error>> {
    let data = Rc::new(FileBytes::open(path).ok()?);
    let file = object::File::parse(&**data).ok()?;
    if new_file {
        budget.add_file(&file);
    }
    let mut sections = Vec::new();
    for id in [
        SectionId::DebugAbbrev,
        SectionId::DebugInfo,
        SectionId::DebugLine,
        SectionId::DebugLoc,
        SectionId::DebugLocLists,
        SectionId::DebugRngLists,
        SectionId::DebugStr,
        SectionId::DebugStrOffsets,
        SectionId::DebugTypes,
        SectionId::DebugCuIndex,
        SectionId::DebugTuIndex,
        SectionId::DebugMacinfo,
        SectionId::DebugMacro,
    ] {
        let name = id.dwo_name()?;
        // All of them, locations too: a package's index slices every section by the
        // unit's contribution, and an empty one fails the whole unit.
        let bytes = crate::resolve::section::section_data(&file, name, &data, budget)
            .ok()
            .flatten();
        sections.push((id, backing.reader(bytes, endian)));
    }
    let empty = backing.reader(None, endian);
    Some(move |id: SectionId| {
        Ok(sections
            .iter()
            .find(|(s, _)| *s == id)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| empty.clone()))
    })
}

pub(super) fn load_dwp(
    binary: &Path,
    endian: RunTimeEndian,
    backing: &Backing,
    budget: &Budget,
) -> Option<gimli::DwarfPackage<R>> {
    let mut name = binary.as_os_str().to_owned();
    name.push(".dwp");
    let path = PathBuf::from(name);
    if !path.is_file() {
        return None;
    }
    let empty = backing.reader(None, endian);
    let sections = load_split_sections(&path, endian, backing, budget, true)?;
    gimli::DwarfPackage::load(sections, empty).ok()
}

impl SplitDwarf {
    // addr2line takes split units as `Arc`; this program is single-threaded.
    #[allow(clippy::arc_with_non_send_sync)]
    pub(super) fn load(
        &self,
        load: &SplitDwarfLoad<R>,
        backing: &Backing,
    ) -> Option<Arc<gimli::Dwarf<R>>> {
        if let Some(package) = &self.package
            && let Ok(Some(dwarf)) = package.find_cu(load.dwo_id, &load.parent)
        {
            return Some(Arc::new(dwarf));
        }
        // A lone .dwo: at the path the skeleton names, else beside the binary (build trees
        // are rarely where the binary ends up).
        let name = load.path.as_ref()?.to_string_lossy().into_owned();
        let mut candidates = Vec::new();
        if let Some(dir) = &load.comp_dir {
            candidates.push(Path::new(&*dir.to_string_lossy()).join(&name));
        }
        if let Some(base) = Path::new(&name).file_name() {
            candidates.push(self.binary_dir.join(base));
        }
        for path in candidates {
            let Some(sections) =
                load_split_sections(&path, self.endian, backing, &self.budget, true)
            else {
                continue;
            };
            let Ok(mut dwarf) = gimli::Dwarf::load(sections) else {
                continue;
            };
            dwarf.make_dwo(&load.parent);
            // A .dwo is for one skeleton: check it is the one asked for.
            let mut units = dwarf.units();
            let matches = matches!(units.next(), Ok(Some(h)) if dwarf
                .unit(h.clone())
                .ok()
                .and_then(|u| u.dwo_id)
                .is_none_or(|id| id == load.dwo_id));
            if matches {
                return Some(Arc::new(dwarf));
            }
        }
        None
    }
}
