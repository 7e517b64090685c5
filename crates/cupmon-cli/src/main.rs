fn main() {
    println!("cupmon");
}
