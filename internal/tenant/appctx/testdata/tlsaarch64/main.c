// The executable of an AArch64 fixture: slot() comes from otel.c (built into it).
void *slot(void);
int main(void) { return slot() == 0; }
