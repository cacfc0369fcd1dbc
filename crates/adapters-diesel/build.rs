// Embedded migrations are read at compile time; a new migration file alone would not rebuild.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
