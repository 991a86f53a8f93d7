// The default OBI pin path ends in the map the CUDA object reads OBI's contexts from.
package cuda

import (
	"path"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
)

func TestOBIMapPathNamesTheMap(t *testing.T) {
	if base := path.Base(ctxtier.OBIMapPath); base != obiMapName {
		t.Errorf("default OBI pin %s, the object's map %s", ctxtier.OBIMapPath, obiMapName)
	}
}
