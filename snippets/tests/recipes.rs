//! docs/getting-started.md's `[dependencies]` recipes, each as the `Cargo.toml` of a fresh
//! crate outside the workspace (the giving crates patched to this checkout, the workspace's
//! lock as a start): it must resolve offline, and build for this machine the number of
//! packages the page says.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One recipe of the page: its name, its TOML and the package count written under it.
struct Recipe {
    name: String,
    toml: String,
    packages: usize,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the snippets crate is in the workspace")
        .to_path_buf()
}

/// The recipes of `page`: a `<!-- recipe: NAME -->` line, a ```toml block, and after it the
/// first "Packages built: **N**".
fn recipes(page: &str) -> Vec<Recipe> {
    let mut found = Vec::new();
    let sections: Vec<&str> = page.split("<!-- recipe: ").skip(1).collect();
    for section in sections {
        let (name, rest) = section
            .split_once(" -->")
            .expect("a recipe line ends with -->");
        let (_, block) = rest
            .split_once("```toml\n")
            .expect("a ```toml block after it");
        let (toml, after) = block.split_once("```").expect("the block ends");
        let (_, count) = after
            .split_once("Packages built: **")
            .unwrap_or_else(|| panic!("recipe `{name}`: no \"Packages built: **N**\""));
        let count = count.split("**").next().unwrap_or_default();
        found.push(Recipe {
            name: name.to_owned(),
            toml: toml.to_owned(),
            packages: count
                .parse()
                .unwrap_or_else(|_| panic!("recipe `{name}`: `{count}` is not a count")),
        });
    }
    found
}

/// A fresh crate for `recipe` in `dir`, the giving crates it names patched to this checkout.
fn fresh_crate(dir: &Path, recipe: &Recipe) {
    let root = workspace();
    let mut manifest = format!(
        "[package]\nname = \"recipe-{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         # Not a member of any workspace above it.\n[workspace]\n\n{}\n[patch.crates-io]\n",
        recipe.name.replace('_', "-"),
        recipe.toml
    );
    for (name, path) in [
        ("giving", root.clone()),
        ("giving-burn", root.join("burn")),
        ("giving-instruments", root.join("instruments")),
    ] {
        manifest += &format!("{name} = {{ path = {:?} }}\n", path.display().to_string());
    }
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock: offline, cargo then picks the versions already downloaded instead
    // of the newest its index knows (as a user's crate beside the checkout would).
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
}

/// The packages `cargo tree` lists for this machine: normal and build dependencies, the crate
/// itself left out, each package once.
fn packages_built(dir: &Path) -> Result<Vec<String>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
        ])
        .current_dir(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let mut packages: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_owned())
        .filter(|line| !line.is_empty() && !line.starts_with("recipe-"))
        .collect();
    packages.sort();
    packages.dedup();
    Ok(packages)
}

#[test]
fn every_recipe_resolves_offline_to_the_packages_the_page_counts() {
    let page = std::fs::read_to_string(workspace().join("docs/getting-started.md")).unwrap();
    let recipes = recipes(&page);
    assert_eq!(
        recipes.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["core", "burn_loop", "learner"]
    );
    let scratch = std::env::temp_dir().join(format!("giving-recipes-{}", std::process::id()));
    let mut wrong = Vec::new();
    for recipe in &recipes {
        let dir = scratch.join(&recipe.name);
        fresh_crate(&dir, recipe);
        match packages_built(&dir) {
            Ok(packages) if packages.len() == recipe.packages => {}
            Ok(packages) => wrong.push(format!(
                "recipe `{}`: the page says {} packages, cargo builds {}",
                recipe.name,
                recipe.packages,
                packages.len()
            )),
            Err(error) => wrong.push(format!(
                "recipe `{}` does not resolve:\n{error}",
                recipe.name
            )),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_recipe_is_its_name_its_toml_and_its_count() {
    let page = "<!-- recipe: a -->\n```toml\n[dependencies]\nx = \"1\"\n```\n\
                Packages built: **3** (x).\n<!-- recipe: b -->\n```toml\ny = \"2\"\n```\n\
                Packages built: **0**.";
    let found = recipes(page);
    assert_eq!(found.len(), 2);
    assert_eq!(
        (
            found[0].name.as_str(),
            found[0].toml.as_str(),
            found[0].packages
        ),
        ("a", "[dependencies]\nx = \"1\"\n", 3)
    );
    assert_eq!((found[1].name.as_str(), found[1].packages), ("b", 0));
}
