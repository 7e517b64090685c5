fn main() {
    print!("{}", cupmon_config::markdown_table());
}
