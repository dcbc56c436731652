// placeholder: filled in by the backend work
int main() { return 77; }
