package arena

import "testing"

// TestCollapseStopsAfterFreeAll: a FreeAll after AdviseHugePages (a flush
// once a load has ended) stops the Collapse before its next region, so it
// never asks the kernel about ranges that are unmapped or mapped again.
func TestCollapseStopsAfterFreeAll(t *testing.T) {
	var m OffHeap
	m.DeferHugePages()
	m.Alloc(RegionAlign)
	m.Alloc(RegionAlign)
	c := m.AdviseHugePages()
	m.FreeAll()
	defer m.FreeAll()
	if r := c.Run(); !r.Stopped || r.Collapsed+r.Failed != 0 {
		t.Fatalf("Run after FreeAll: %+v, want Stopped before any of the %d regions", r, c.Len())
	}
	m.DeferHugePages()
	m.Alloc(RegionAlign)
	if r := m.AdviseHugePages().Run(); r.Stopped || r.Collapsed+r.Failed != 1 {
		t.Fatalf("Run of a Collapse made after the FreeAll: %+v, want 1 region tried, not Stopped", r)
	}
}
