// The smallest program: start-up cost only.
int main(void) { return 0; }
